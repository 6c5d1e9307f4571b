"""A two-layer GraphSAGE-style network on gpuprim.spmm, trained a few steps on a synthetic power-law graph side
by side with a pure-PyTorch reference (index_select + index_add) from the same initial weights; the two loss
curves must agree. Then a BFS on a generated Kronecker graph, validated by the Graph500 rules.

    python examples/gnn_layer.py [--device cpu|cuda] [--steps 5]

Layer: h' = relu(W_self h + W_neigh mean_{u in N(v)} h_u) with the neighbour mean = gpuprim.spmm(crow, col, None,
h, "mean"), whose backward is the transposed product (gpuprim.csr_transpose + gpuprim.spmm). Deterministic and,
for the same inputs, the same bits on CPU and CUDA.
"""
from __future__ import annotations

import argparse
import copy
import sys
from pathlib import Path

import torch
from torch import nn

import gpuprim

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from graphs import bfs_reference, kronecker_graph, power_law_lengths, validate_bfs  # noqa: E402


class SageLayer(nn.Module):
    def __init__(self, d_in: int, d_out: int):
        super().__init__()
        self.self_proj = nn.Linear(d_in, d_out)
        self.neigh_proj = nn.Linear(d_in, d_out, bias=False)

    def forward(self, h: torch.Tensor, crow: torch.Tensor, col: torch.Tensor, use_gpuprim: bool) -> torch.Tensor:
        if use_gpuprim:
            neigh = gpuprim.spmm(crow, col, None, h, "mean")
        else:  # the reference: gather neighbour rows, add them per destination row, divide by the degree
            rows = torch.repeat_interleave(torch.arange(crow.numel() - 1, device=h.device), crow.diff())
            total = torch.zeros_like(h).index_add(0, rows, h.index_select(0, col))
            neigh = total / crow.diff().clamp(min=1).unsqueeze(1).to(h.dtype)
        return torch.relu(self.self_proj(h) + self.neigh_proj(neigh))


class Sage(nn.Module):
    def __init__(self, d_in: int, hidden: int, classes: int):
        super().__init__()
        self.layers = nn.ModuleList([SageLayer(d_in, hidden), SageLayer(hidden, hidden)])
        self.head = nn.Linear(hidden, classes)

    def forward(self, h, crow, col, use_gpuprim: bool):
        for layer in self.layers:
            h = layer(h, crow, col, use_gpuprim)
        return self.head(h)


def power_law_graph(vertices: int, mean_degree: float, seed: int, device: str):
    g = torch.Generator().manual_seed(seed)
    lengths = power_law_lengths(vertices, mean_degree, g)
    crow = torch.zeros(vertices + 1, dtype=torch.int64)
    crow[1:] = lengths.cumsum(0)
    col = torch.randint(0, vertices, (int(crow[-1]),), generator=g)
    return crow.to(device), col.to(device)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--steps", type=int, default=5)
    args = parser.parse_args()
    torch.manual_seed(0)
    vertices, d_in, hidden, classes = 4000, 32, 64, 5
    crow, col = power_law_graph(vertices, 8.0, seed=1, device=args.device)
    features = torch.randn(vertices, d_in, device=args.device)
    labels = torch.randint(0, classes, (vertices,), device=args.device)
    model = Sage(d_in, hidden, classes).to(args.device)
    reference = copy.deepcopy(model)
    optimizers = [torch.optim.SGD(m.parameters(), lr=0.1) for m in (model, reference)]
    print(f"graph: {vertices} vertices, {col.numel()} edges, max degree {int(crow.diff().max())}")
    for step in range(args.steps):
        losses = []
        for m, opt, use in ((model, optimizers[0], True), (reference, optimizers[1], False)):
            opt.zero_grad()
            loss = nn.functional.cross_entropy(m(features, crow, col, use), labels)
            loss.backward()
            opt.step()
            losses.append(float(loss.detach()))
        print(f"step {step}: loss gpuprim {losses[0]:.6f}  reference {losses[1]:.6f}")
        assert abs(losses[0] - losses[1]) <= 1e-4 * max(1.0, abs(losses[1])), "the loss curves diverge"

    kcrow, kcol = kronecker_graph(12, 16, seed=2, device=args.device)
    root = int(torch.argmax(kcrow.diff()))
    with gpuprim.deterministic(True):
        dist, parent = gpuprim.bfs(kcrow, kcol, root, symmetric=True)
    expected, expected_parent = bfs_reference(kcrow, kcol, [root])
    validate_bfs(kcrow, kcol, [root], dist, parent, expected)
    assert torch.equal(parent.cpu(), expected_parent.cpu())
    reached = int((dist >= 0).sum())
    print(f"bfs: kronecker scale 12, root {root}: {reached} vertices reached, depth {int(dist.max())}, "
          "parents valid by the Graph500 rules")


if __name__ == "__main__":
    main()
