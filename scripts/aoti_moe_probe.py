"""Which tensor of examples/export_aoti.py's MoE model differs between eager and its AOTInductor package.

    PYTHONPATH=torch_ops python3 scripts/aoti_moe_probe.py [--device cuda]

The model's forward returns every intermediate (norm, router logits, each Routing field, the permuted rows, each
row's expert, the expert outputs, the result); each is compared bit for bit and its strides are printed, so the
first one that differs names the op (or the Inductor kernel) to look at.
"""
import argparse
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
import export_aoti  # noqa: E402

import gpuprim  # noqa: E402


class Probe(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.m = export_aoti.MoEModel()

    def forward(self, x):
        b = self.m.block
        h = b.norm(x)
        logits = b.router(h)
        r = gpuprim.moe_route(logits, b.k, capacity=b.capacity(x.size(0)), pad_to=b.pad_to)
        permuted = gpuprim.moe_permute(h, r)
        rows = torch.arange(permuted.size(0), device=x.device)
        expert = (torch.searchsorted(r.offsets, rows, right=True) - 1).clamp(max=b.experts - 1)
        hidden = torch.nn.functional.gelu(torch.bmm(permuted.unsqueeze(1), b.w1[expert]))
        expert_out = torch.bmm(hidden, b.w2[expert]).squeeze(1)
        out = x + gpuprim.moe_unpermute(expert_out, r, r.gates.to(x.dtype))
        return (h, logits, *r, permuted, expert, expert_out, out)


NAMES = ["h", "logits", "expert_ids", "gates", "counts", "offsets", "slots", "token_ids", "num_dropped", "permuted",
         "expert", "expert_out", "out"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu", choices=("cpu", "cuda"))
    device = parser.parse_args().device
    export_aoti.link_shared_libstdcxx()
    torch.manual_seed(0)
    model = Probe().to(device).eval()
    x = torch.randn(24, 32, generator=torch.Generator().manual_seed(0)).to(device)
    start = time.time()
    with torch.no_grad():
        eager = model(x)
        program = torch.export.export(model, (x,), dynamic_shapes=({0: torch.export.Dim("tokens", min=2, max=4096)},),
                                      strict=False)
        package = Path(tempfile.mkdtemp(prefix="gpuprim_aoti_probe_")) / "moe_probe.pt2"
        compiled = torch._inductor.aoti_load_package(
            torch._inductor.aoti_compile_and_package(program, package_path=str(package)))
        got = compiled(x)
        again = compiled(x)
    print(f"compiled in {time.time() - start:.0f} s; gpuprim ops:",
          [str(n.target) for n in program.graph.nodes if "gpuprim" in str(n.target)])
    for name, a, b in zip(NAMES, got, eager):
        same = a.shape == b.shape and a.dtype == b.dtype and torch.equal(a, b)
        diff = "" if same or a.shape != b.shape else f" max|diff| {(a.double() - b.double()).abs().max().item():.3g}"
        print(f"{name:12} {str(tuple(b.shape)):10} {str(b.dtype):14} strides eager {b.stride()} package {a.stride()}"
              f" {'EQUAL' if same else 'DIFFERS'}{diff}")
        if not same and a.numel() <= 64:
            print("   eager  ", b.flatten().tolist())
            print("   package", a.flatten().tolist())
    print("second run equal to the first:", all(torch.equal(a, b) for a, b in zip(again, got)))


if __name__ == "__main__":
    main()
