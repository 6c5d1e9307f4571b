"""A small mixture-of-experts transformer block on gpuprim's routing ops, trained side by side with a
pure-PyTorch reference layer from the same initial weights; the two loss curves must agree.

    python examples/moe_layer.py [--device cpu|cuda] [--steps 5]

The gpuprim layer: router logits -> gpuprim.moe_route (top-k gates, capacity with position drops, expert
blocks padded for GEMM tiles) -> gpuprim.moe_permute (tokens grouped by expert) -> expert MLPs over each
expert's block of rows (torch._grouped_mm on CUDA when this torch has it, else one matmul per expert) ->
gpuprim.moe_unpermute (gate-weighted sum back per token). No host sync in routing, permute or unpermute.

The reference layer: softmax + topk, the classic one-hot cumsum for capacity (earliest tokens kept), and
index_select / index_add per expert.
"""
from __future__ import annotations

import argparse
import copy
import math
from typing import Optional

import torch
from torch import nn

import gpuprim


class MoEBlock(nn.Module):
    """x + MoE(LayerNorm(x)); E experts, each a two-layer GELU MLP, top-k routing with a capacity."""

    def __init__(self, hidden: int, ffn: int, experts: int, k: int, capacity_factor: Optional[float], pad_to: int):
        super().__init__()
        self.experts, self.k, self.capacity_factor, self.pad_to = experts, k, capacity_factor, pad_to
        self.norm = nn.LayerNorm(hidden)
        self.router = nn.Linear(hidden, experts, bias=False)
        self.w1 = nn.Parameter(torch.randn(experts, hidden, ffn) / math.sqrt(hidden))
        self.w2 = nn.Parameter(torch.randn(experts, ffn, hidden) / math.sqrt(ffn))

    def capacity(self, tokens: int) -> Optional[int]:
        """Pairs kept per expert; None (capacity_factor None): no limit, so nothing depends on the token count."""
        if self.capacity_factor is None:
            return None
        return math.ceil(self.capacity_factor * tokens * self.k / self.experts)

    def forward(self, x: torch.Tensor, use_grouped_mm: bool = False, sync_free: bool = False) -> torch.Tensor:
        h = self.norm(x)
        logits = self.router(h)
        routing = gpuprim.moe_route(logits, self.k, capacity=self.capacity(x.size(0)), pad_to=self.pad_to)
        permuted = gpuprim.moe_permute(h, routing)  # [R, H], expert by expert, padding rows zero
        if sync_free and not use_grouped_mm:
            # No host read (torch.export, CUDA graphs): each row takes its expert's weights, found from the
            # offsets on the device. Memory R*H*F: for small layers (examples/export_aoti.py).
            rows = torch.arange(permuted.size(0), device=x.device)
            # The whole offsets tensor, not offsets[1:]: Inductor's searchsorted ignores a sliced sequence's
            # storage offset on CUDA (pytorch/pytorch#182343) and would give every row the next expert.
            expert = (torch.searchsorted(routing.offsets, rows, right=True) - 1).clamp(max=self.experts - 1)
            hidden = torch.nn.functional.gelu(torch.bmm(permuted.unsqueeze(1), self.w1[expert]))
            expert_out = torch.bmm(hidden, self.w2[expert]).squeeze(1)
        elif use_grouped_mm:
            ends = routing.offsets[1:].to(torch.int32)  # each expert's block ends here (no host sync)
            hidden = torch.nn.functional.gelu(torch._grouped_mm(permuted, self.w1, offs=ends))
            expert_out = torch._grouped_mm(hidden, self.w2, offs=ends)
        else:
            expert_out = torch.zeros_like(permuted)
            offsets = routing.offsets.tolist()  # one host read per step: this fallback loops over experts
            for e in range(self.experts):
                lo, hi = offsets[e], offsets[e + 1]
                if hi > lo:
                    block = torch.nn.functional.gelu(permuted[lo:hi] @ self.w1[e]) @ self.w2[e]
                    expert_out = expert_out.index_copy(0, torch.arange(lo, hi, device=x.device), block)
        return x + gpuprim.moe_unpermute(expert_out, routing, routing.gates.to(x.dtype))


def reference_forward(block: MoEBlock, x: torch.Tensor) -> torch.Tensor:
    """The same layer in plain PyTorch: softmax/topk gating, one-hot cumsum capacity, per-expert index ops."""
    tokens = x.size(0)
    h = block.norm(x)
    scores = block.router(h).float().softmax(-1)
    top = torch.sort(-scores, dim=-1, stable=True).indices[:, :block.k]  # ties to the lower expert index
    gates = scores.gather(1, top)
    gates = gates / gates.sum(-1, keepdim=True)
    flat_expert = top.reshape(-1)  # (token, choice) pairs in token order
    one_hot = torch.nn.functional.one_hot(flat_expert, block.experts)
    position = (one_hot.cumsum(0) * one_hot).sum(-1) - 1  # rank of each pair inside its expert
    capacity = block.capacity(tokens)
    keep = position < (capacity if capacity is not None else tokens * block.k)
    flat_token = torch.arange(tokens, device=x.device).repeat_interleave(block.k)
    flat_gate = gates.reshape(-1).to(x.dtype)
    out = torch.zeros_like(h)
    for e in range(block.experts):
        pairs = torch.nonzero(keep & (flat_expert == e)).reshape(-1)
        rows = h.index_select(0, flat_token[pairs])
        y = torch.nn.functional.gelu(rows @ block.w1[e]) @ block.w2[e]
        out = out.index_add(0, flat_token[pairs], y * flat_gate[pairs, None])
    return x + out


def grouped_mm_available(device: str, dtype: torch.dtype) -> bool:
    return device == "cuda" and dtype == torch.bfloat16 and hasattr(torch, "_grouped_mm")


def train(steps: int, device: str, dtype: torch.dtype, tokens: int, hidden: int, ffn: int, experts: int, k: int,
          seed: int = 0) -> tuple[list[float], list[float]]:
    torch.manual_seed(seed)
    pad_to = 16 if grouped_mm_available(device, dtype) else 8
    model = MoEBlock(hidden, ffn, experts, k, capacity_factor=1.25, pad_to=pad_to).to(device=device, dtype=dtype)
    reference = copy.deepcopy(model)
    optimizers = [torch.optim.SGD(m.parameters(), lr=0.05) for m in (model, reference)]
    grouped = grouped_mm_available(device, dtype)
    losses, reference_losses = [], []
    for step in range(steps):
        gen = torch.Generator().manual_seed(1000 + step)
        x = torch.randn(tokens, hidden, generator=gen).to(device=device, dtype=dtype)
        target = torch.randn(tokens, hidden, generator=gen).to(device=device, dtype=dtype)
        for net, opt, log, fwd in ((model, optimizers[0], losses, lambda m, v: m(v, grouped)),
                                   (reference, optimizers[1], reference_losses, reference_forward)):
            opt.zero_grad()
            loss = (fwd(net, x).float() - target.float()).square().mean()
            loss.backward()
            opt.step()
            log.append(loss.item())
    return losses, reference_losses


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--tokens", type=int, default=256)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--ffn", type=int, default=128)
    parser.add_argument("--experts", type=int, default=8)
    parser.add_argument("--k", type=int, default=2)
    parser.add_argument("--dtype", choices=("float32", "bfloat16"), default="float32",
                        help="bfloat16 on CUDA runs the experts with torch._grouped_mm (looser agreement)")
    args = parser.parse_args()
    dtype = getattr(torch, args.dtype)
    losses, reference_losses = train(args.steps, args.device, dtype, args.tokens, args.hidden, args.ffn,
                                     args.experts, args.k)
    print(f"{'step':>4} {'gpuprim':>12} {'reference':>12}")
    for step, (a, b) in enumerate(zip(losses, reference_losses)):
        print(f"{step:>4} {a:>12.6f} {b:>12.6f}")
    worst = max(abs(a - b) / max(abs(b), 1e-12) for a, b in zip(losses, reference_losses))
    if worst > (1e-4 if dtype == torch.float32 else 3e-2):
        raise SystemExit(f"loss curves differ: max relative difference {worst:.2e}")
    print(f"gpuprim MoE block matches the reference loss curve (max relative difference {worst:.1e})")


if __name__ == "__main__":
    main()
