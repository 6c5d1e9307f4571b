"""The MoE block of examples/moe_layer.py with its experts split over ranks (expert parallelism), trained side by
side with the single-process block from the same initial weights; the two loss curves must agree.

    torchrun --nproc-per-node N examples/moe_expert_parallel.py [--steps 5] [--capacity-factor 1.25 | --dropless]

gloo on CPU, NCCL on GPUs (one per rank). Every rank holds the replicated LayerNorm and router and experts
[rank * L, (rank + 1) * L) of the E = N * L experts, and takes its share of the batch: gpuprim.moe_route over all
E experts, gpuprim.distributed.dispatch (tokens to the ranks owning their experts, grouped by local expert),
the local expert MLPs, gpuprim.distributed.combine (outputs back, gate-weighted sum). The replicated parameters'
gradients are summed over ranks (all_reduce); the experts' gradients already hold every rank's tokens.

With a capacity factor the capacity is per (rank, expert), so the single-process block runs on each rank's share
of the batch in turn, which routes exactly as the ranks do; dropless, it runs on the whole batch at once.
"""
from __future__ import annotations

import argparse
import copy
import math
import os
from typing import Optional

import torch
import torch.distributed as dist
from moe_layer import MoEBlock, grouped_mm_available
from torch import nn

import gpuprim


class ExpertParallelMoEBlock(nn.Module):
    """x + MoE(LayerNorm(x)) with this rank's experts [rank * L, (rank + 1) * L) of a MoEBlock."""

    def __init__(self, full: MoEBlock, group: Optional[dist.ProcessGroup] = None):
        super().__init__()
        world, rank = dist.get_world_size(group), dist.get_rank(group)
        self.group, self.local = group, full.experts // world
        self.full_experts, self.k, self.capacity_factor, self.pad_to = full.experts, full.k, full.capacity_factor, \
            full.pad_to
        self.norm, self.router = copy.deepcopy(full.norm), copy.deepcopy(full.router)
        mine = slice(rank * self.local, (rank + 1) * self.local)
        self.w1 = nn.Parameter(full.w1.detach()[mine].clone())
        self.w2 = nn.Parameter(full.w2.detach()[mine].clone())

    def forward(self, x: torch.Tensor, use_grouped_mm: bool = False) -> torch.Tensor:
        h = self.norm(x)
        capacity = None if self.capacity_factor is None else \
            math.ceil(self.capacity_factor * x.size(0) * self.k / self.full_experts)  # MoEBlock's rule, per rank
        routing = gpuprim.moe_route(self.router(h), self.k, capacity=capacity)
        expert_input, handle = gpuprim.distributed.dispatch(h, routing, self.group, num_local_experts=self.local,
                                                            capacity=capacity, pad_to=self.pad_to)
        if use_grouped_mm:
            ends = handle.offsets[1:].to(torch.int32)  # no host sync
            inner = torch.nn.functional.gelu(torch._grouped_mm(expert_input, self.w1, offs=ends))
            expert_out = torch._grouped_mm(inner, self.w2, offs=ends)
        else:
            expert_out = torch.zeros_like(expert_input)
            offsets = handle.offsets.tolist()  # one host read per step: this fallback loops over experts
            for e in range(self.local):
                lo, hi = offsets[e], offsets[e + 1]
                if hi > lo:
                    block = torch.nn.functional.gelu(expert_input[lo:hi] @ self.w1[e]) @ self.w2[e]
                    expert_out = expert_out.index_copy(0, torch.arange(lo, hi, device=x.device), block)
        return x + gpuprim.distributed.combine(expert_out, handle, routing.gates.to(x.dtype))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--tokens", type=int, default=256, help="the whole batch, split evenly over the ranks")
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--ffn", type=int, default=128)
    parser.add_argument("--local-experts", type=int, default=4)
    parser.add_argument("--k", type=int, default=2)
    parser.add_argument("--capacity-factor", type=float, default=1.25)
    parser.add_argument("--dropless", action="store_true", help="no capacity (one host sync per dispatch)")
    parser.add_argument("--dtype", choices=("float32", "bfloat16"), default="float32")
    args = parser.parse_args()
    cuda = torch.cuda.is_available()
    if cuda:
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    dist.init_process_group("nccl" if cuda else "gloo")
    world, rank = dist.get_world_size(), dist.get_rank()
    device = torch.device("cuda", torch.cuda.current_device()) if cuda else torch.device("cpu")
    dtype = getattr(torch, args.dtype)
    grouped = grouped_mm_available(device.type, dtype)
    torch.manual_seed(0)
    experts = args.local_experts * world
    reference = MoEBlock(args.hidden, args.ffn, experts, args.k, None if args.dropless else args.capacity_factor,
                         pad_to=16 if grouped else 8).to(device=device, dtype=dtype)
    model = ExpertParallelMoEBlock(reference)
    optimizers = [torch.optim.SGD(m.parameters(), lr=0.05) for m in (model, reference)]
    replicated = [model.norm.weight, model.norm.bias, model.router.weight]
    losses, reference_losses = [], []
    for step in range(args.steps):
        gen = torch.Generator().manual_seed(1000 + step)
        x = torch.randn(args.tokens, args.hidden, generator=gen).to(device=device, dtype=dtype)
        target = torch.randn(args.tokens, args.hidden, generator=gen).to(device=device, dtype=dtype)
        shares = [list(range(world))] if args.dropless else [[r] for r in range(world)]
        x_parts, target_parts = x.tensor_split(world), target.tensor_split(world)
        scale = 1.0 / (args.tokens * args.hidden)  # the loss is the mean over the whole batch

        for opt in optimizers:
            opt.zero_grad()
        loss = (model(x_parts[rank], grouped).float() - target_parts[rank].float()).square().sum() * scale
        loss.backward()
        for p in replicated:
            dist.all_reduce(p.grad)
        optimizers[0].step()
        loss = loss.detach()
        dist.all_reduce(loss)
        losses.append(loss.item())

        reference_loss = torch.zeros((), device=device)
        for ranks in shares:  # the single-process block, routing as the ranks do
            xs, ts = torch.cat([x_parts[r] for r in ranks]), torch.cat([target_parts[r] for r in ranks])
            reference_loss = reference_loss + (reference(xs, grouped).float() - ts.float()).square().sum() * scale
        reference_loss.backward()
        optimizers[1].step()
        reference_losses.append(reference_loss.item())
    if rank == 0:
        print(f"{world} ranks, {experts} experts ({args.local_experts} per rank), {device.type}, {args.dtype}, "
              + ("dropless" if args.dropless else f"capacity factor {args.capacity_factor}"))
        print(f"{'step':>4} {'expert-parallel':>16} {'single-process':>16}")
        for step, (a, b) in enumerate(zip(losses, reference_losses)):
            print(f"{step:>4} {a:>16.6f} {b:>16.6f}")
    worst = max(abs(a - b) / max(abs(b), 1e-12) for a, b in zip(losses, reference_losses))
    dist.destroy_process_group()
    if worst > (1e-4 if dtype == torch.float32 else 3e-2):
        raise SystemExit(f"rank {rank}: loss curves differ: max relative difference {worst:.2e}")
    if rank == 0:
        print(f"expert-parallel block matches the single-process loss curve (max relative difference {worst:.1e})")


if __name__ == "__main__":
    main()
