"""HF transformers' MoE blocks (Mixtral, Qwen3-MoE, DeepSeek-V3) with their routing replaced by gpuprim's.

    python examples/hf_moe_drop_in.py [--device cpu|cuda] [--dtype float32|bfloat16] [--tokens 4096]

Each block is built from a small config (random weights, nothing downloaded). The gpuprim version uses the
block's own parameters: the router's weight (and DeepSeek-V3's e_score_correction_bias), the experts' weights
and the shared experts, and runs router logits -> gpuprim.moe_route (with DeepSeek-V3's sigmoid scores, bias,
group-limited selection and routed scaling; with Mixtral / Qwen's gates cast to the hidden dtype) ->
gpuprim.moe_permute -> expert MLPs (torch._grouped_mm on CUDA in bf16 when this torch has it, else a matmul per
expert) -> gpuprim.moe_unpermute. The output and the gradients of the input and of every block parameter are
compared with the block's own forward, then both are timed (forward + backward) on CUDA.

One visible difference: on exactly equal scores gpuprim picks the lower expert (and group) index, while
torch.topk's choice among ties is unspecified; with random weights there are no ties. (HF's DeepSeek-V3 also
scores the experts of dropped groups 0.0 instead of excluding them; that matters only when fewer than k kept
experts have a positive biased score, never with sigmoid scores and a small bias.)

Skips with a message when transformers is missing or a block's layout is not one this script knows.
"""
from __future__ import annotations

import argparse
import sys
from typing import Callable

import torch
import torch.nn.functional as F

import gpuprim


def expert_weights(block: torch.nn.Module, hidden: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(gate [E, H, I], up [E, H, I], down [E, I, H]) as views / stacks of the block's own parameters
    (gradients flow back to them). Knows ModuleList experts (w1/w3/w2 or gate_proj/up_proj/down_proj) and
    fused expert tensors (gate_up_proj, down_proj in either orientation)."""
    experts = block.experts
    if isinstance(experts, torch.nn.ModuleList):
        first = experts[0]
        names = ("w1", "w3", "w2") if hasattr(first, "w1") else ("gate_proj", "up_proj", "down_proj")
        gate, up, down = (torch.stack([getattr(e, n).weight.t() for e in experts]) for n in names)
        return gate, up, down
    gate_up, down = experts.gate_up_proj, experts.down_proj
    if gate_up.shape[-1] == hidden:  # [E, 2I, H]: linear weights
        gate_up = gate_up.transpose(1, 2)
    if down.shape[-1] != hidden:  # [E, H, I]: linear weights
        down = down.transpose(1, 2)
    gate, up = gate_up.chunk(2, dim=-1)
    return gate, up, down


def run_experts(permuted: torch.Tensor, routing: gpuprim.Routing, weights, grouped: bool) -> torch.Tensor:
    gate, up, down = weights
    if grouped:
        ends = routing.offsets[1:].to(torch.int32)  # no host sync
        act = F.silu(torch._grouped_mm(permuted, gate, offs=ends)) * torch._grouped_mm(permuted, up, offs=ends)
        return torch._grouped_mm(act, down, offs=ends)
    out = torch.zeros_like(permuted)
    offsets = routing.offsets.tolist()  # the fallback loops over experts: one host read
    for e in range(gate.shape[0]):
        lo, hi = offsets[e], offsets[e + 1]
        if hi > lo:
            rows = permuted[lo:hi]
            block_out = (F.silu(rows @ gate[e]) * (rows @ up[e])) @ down[e]
            out = out.index_copy(0, torch.arange(lo, hi, device=rows.device), block_out)
    return out


def gpuprim_forward(kind: str, block: torch.nn.Module, config, x: torch.Tensor, grouped: bool) -> torch.Tensor:
    shape = x.shape
    h = x.reshape(-1, shape[-1])
    pad_to = 16 if grouped else 1
    if kind == "deepseek_v3":
        router = block.gate
        logits = F.linear(h.float(), router.weight.float())  # HF's router runs in fp32
        routing = gpuprim.moe_route(logits, config.num_experts_per_tok, score="sigmoid",
                                    renormalize=config.norm_topk_prob, pad_to=pad_to,
                                    bias=router.e_score_correction_bias, num_groups=config.n_group,
                                    topk_groups=config.topk_group, scaling=config.routed_scaling_factor)
    else:
        logits = F.linear(h, block.gate.weight)
        renormalize = getattr(config, "norm_topk_prob", True)  # Mixtral always renormalizes
        routing = gpuprim.moe_route(logits, config.num_experts_per_tok, renormalize=renormalize, pad_to=pad_to,
                                    gate_dtype=x.dtype)  # HF casts the gates to the hidden dtype
    permuted = gpuprim.moe_permute(h, routing)
    expert_out = run_experts(permuted, routing, expert_weights(block, shape[-1]), grouped)
    out = gpuprim.moe_unpermute(expert_out, routing, routing.gates)
    if getattr(block, "shared_experts", None) is not None:
        out = out + block.shared_experts(h)
    return out.view(shape)


def hf_forward(block: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    out = block(x)
    return out[0] if isinstance(out, tuple) else out


def build(kind: str, hidden: int):
    """(block, config) from a small config of the family, or None if this transformers lacks it."""
    common = dict(hidden_size=hidden, num_hidden_layers=1, num_attention_heads=4, num_key_value_heads=4,
                  vocab_size=128, hidden_act="silu")
    if kind == "mixtral":
        from transformers import MixtralConfig
        from transformers.models.mixtral.modeling_mixtral import MixtralSparseMoeBlock
        config = MixtralConfig(intermediate_size=hidden * 3 // 2, num_local_experts=8, num_experts_per_tok=2,
                               **common)
        return MixtralSparseMoeBlock(config), config
    if kind == "qwen3_moe":
        from transformers import Qwen3MoeConfig
        from transformers.models.qwen3_moe.modeling_qwen3_moe import Qwen3MoeSparseMoeBlock
        config = Qwen3MoeConfig(intermediate_size=hidden * 2, moe_intermediate_size=hidden * 3 // 4, num_experts=64,
                                num_experts_per_tok=8, norm_topk_prob=True, **common)
        return Qwen3MoeSparseMoeBlock(config), config
    from transformers import DeepseekV3Config
    from transformers.models.deepseek_v3.modeling_deepseek_v3 import DeepseekV3MoE
    config = DeepseekV3Config(intermediate_size=hidden * 2, moe_intermediate_size=hidden * 3 // 4,
                              n_routed_experts=256, num_experts_per_tok=8, n_group=8, topk_group=4,
                              n_shared_experts=1, routed_scaling_factor=2.5, norm_topk_prob=True,
                              first_k_dense_replace=0, **common)
    block = DeepseekV3MoE(config)
    with torch.no_grad():  # a trained-looking correction bias, so that it changes some selections
        block.gate.e_score_correction_bias.normal_(0.0, 0.02)
    return block, config


def gradients(forward: Callable[[torch.Tensor], torch.Tensor], block, x, grad_out):
    block.zero_grad(set_to_none=True)
    leaf = x.detach().clone().requires_grad_()
    out = forward(leaf)
    out.backward(grad_out)
    grads = {"input": leaf.grad}
    grads.update({n: p.grad for n, p in block.named_parameters() if p.grad is not None})
    return out.detach(), grads


def relative_error(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a.float() - b.float()).abs().max() / b.float().abs().max().clamp_min(1e-12))


def time_step(forward, x, grad_out, repeat: int = 20) -> float:
    leaf = x.detach().clone().requires_grad_()
    for _ in range(3):
        forward(leaf).backward(grad_out)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(repeat):
        start.record()
        forward(leaf).backward(grad_out)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return sorted(times)[len(times) // 2]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--dtype", choices=("float32", "bfloat16"), default=None,
                        help="default: bfloat16 on CUDA, float32 on CPU")
    parser.add_argument("--tokens", type=int, default=None, help="default: 4096 on CUDA, 256 on CPU")
    parser.add_argument("--hidden", type=int, default=256)
    args = parser.parse_args()
    try:
        import transformers
    except ImportError:
        print("skipped: transformers is not installed (pip install transformers); nothing to compare against")
        return 0
    device = args.device
    dtype = getattr(torch, args.dtype or ("bfloat16" if device == "cuda" else "float32"))
    tokens = args.tokens or (4096 if device == "cuda" else 256)
    grouped = device == "cuda" and dtype == torch.bfloat16 and hasattr(torch, "_grouped_mm")
    tolerance = 1e-4 if dtype == torch.float32 else 3e-2
    print(f"transformers {transformers.__version__}, {device}, {dtype}, {tokens} tokens, hidden {args.hidden}"
          f"{', experts on torch._grouped_mm' if grouped else ''}")
    failed = False
    for kind in ("mixtral", "qwen3_moe", "deepseek_v3"):
        try:
            block, config = build(kind, args.hidden)
        except (ImportError, TypeError, AttributeError) as error:
            print(f"{kind:>12}: skipped, this transformers has no such block ({error})")
            continue
        torch.manual_seed(0)
        with torch.no_grad():  # a bare block is not initialized by PreTrainedModel: give every weight values
            for name, parameter in block.named_parameters():
                if not name.endswith("e_score_correction_bias"):
                    parameter.normal_(0.0, parameter.shape[-1] ** -0.5 if parameter.dim() > 1 else 0.02)
        block = block.to(device=device, dtype=dtype).eval()
        if kind == "deepseek_v3":
            block.gate.e_score_correction_bias.data = block.gate.e_score_correction_bias.data.float()
        x = torch.randn(1, tokens, args.hidden, device=device, dtype=dtype)
        grad_out = torch.randn_like(x)
        try:
            ours_fn = lambda v, b=block, c=config, k=kind: gpuprim_forward(k, b, c, v, grouped)  # noqa: E731
            ours, ours_grads = gradients(ours_fn, block, x, grad_out)
        except AttributeError as error:
            print(f"{kind:>12}: skipped, block layout not recognised by this script ({error})")
            continue
        theirs, their_grads = gradients(lambda v, b=block: hf_forward(b, v), block, x, grad_out)
        if not bool(torch.isfinite(theirs).all()) or float(theirs.abs().max()) == 0.0:
            print(f"{kind:>12}: FAILED, the block's own output is not finite and non-zero: nothing to compare")
            failed = True
            continue
        errors = {"output": relative_error(ours, theirs)}
        errors.update({name: relative_error(ours_grads[name], g) for name, g in their_grads.items()
                       if name in ours_grads})
        missing = sorted(set(their_grads) - set(ours_grads))
        worst = max(errors.items(), key=lambda item: item[1])
        ok = worst[1] <= tolerance and not missing
        failed |= not ok
        line = f"{kind:>12}: output and {len(errors) - 1} gradients match (worst {worst[0]}: {worst[1]:.1e})"
        if not ok:
            line = f"{kind:>12}: MISMATCH worst {worst[0]}: {worst[1]:.1e}, no gradient for {missing}"
        if device == "cuda":
            hf_ms = time_step(lambda v, b=block: hf_forward(b, v), x, grad_out)
            our_ms = time_step(ours_fn, x, grad_out)
            line += f"; forward+backward {hf_ms:.2f} ms (HF) vs {our_ms:.2f} ms (gpuprim), {hf_ms / our_ms:.2f}x"
        print(line)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
