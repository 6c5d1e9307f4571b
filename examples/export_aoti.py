"""torch.export + AOTInductor with gpuprim ops: three small models exported (strict and non-strict, batch and
token counts dynamic), compiled into .pt2 packages with torch._inductor.aoti_compile_and_package, and checked
against eager; then examples/cpp/aoti_main.cpp runs the packages from C++ (no Python) with libgpuprim loaded.

    python examples/export_aoti.py --device cpu --out build/aoti      # export, compile, check in Python
    bash examples/cpp/build_and_run.sh .venv/bin/python build/aoti    # run the packages from C++

The models:
  moe        the MoE block of examples/moe_layer.py (gpuprim.moe_route -> moe_permute -> expert MLPs ->
             moe_unpermute), without a capacity so that nothing depends on the token count, experts computed
             without a host read (each row gathers its expert's weights).
  embedding  a recommender tower: gpuprim.nn.EmbeddingBag (mean of each bag) + an MLP.
  sampling   an LLM top-k sampling head: lm_head -> gpuprim.topk -> softmax -> gpuprim.cumsum -> inverse CDF
             with uniform noise given as an input (so C++ and Python draw the same tokens).

Every gpuprim op used here has output sizes fixed by its input sizes and arguments, so the exported graphs
have no data-dependent shapes. gpuprim.masked_select (exact-size output) would give an unbacked size, and
embedding_bag(..., sparse=True) syncs in its backward: neither is used in these inference graphs.
"""
from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Callable

import torch
from torch import Tensor, nn
from torch.export import Dim

import gpuprim
import gpuprim.nn

sys.path.insert(0, str(Path(__file__).resolve().parent))
from moe_layer import MoEBlock  # noqa: E402


class MoEModel(nn.Module):
    """MoE block on [tokens, hidden] activations; tokens is dynamic."""

    def __init__(self, hidden: int = 32, ffn: int = 64, experts: int = 8, k: int = 2):
        super().__init__()
        self.block = MoEBlock(hidden, ffn, experts, k, capacity_factor=None, pad_to=4)

    def forward(self, x: Tensor) -> Tensor:
        return self.block(x, sync_free=True)


class EmbeddingBagModel(nn.Module):
    """Bags of item ids (flat ids + offsets, one bag per example) -> mean embedding -> MLP score."""

    def __init__(self, items: int = 1000, dim: int = 16):
        super().__init__()
        self.bag = gpuprim.nn.EmbeddingBag(items, dim, mode="mean")
        self.mlp = nn.Sequential(nn.Linear(dim, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, ids: Tensor, offsets: Tensor) -> Tensor:
        return self.mlp(self.bag(ids, offsets)).squeeze(-1)


class TopKSamplingHead(nn.Module):
    """Next-token sampling from the k most likely tokens: returns (token ids [B], their probabilities [B])."""

    def __init__(self, hidden: int = 32, vocab: int = 512, k: int = 8, temperature: float = 0.8):
        super().__init__()
        self.lm_head = nn.Linear(hidden, vocab, bias=False)
        self.k, self.temperature = k, temperature

    def forward(self, hidden: Tensor, uniform: Tensor) -> tuple[Tensor, Tensor]:
        logits = self.lm_head(hidden) / self.temperature
        top_logits, top_ids = gpuprim.topk(logits, self.k)  # ties to the lower token id, on every device
        probs = torch.softmax(top_logits.float(), dim=-1)
        cdf = gpuprim.cumsum(probs, -1)  # deterministic prefix sum
        # inverse CDF: the first of the k whose cumulative probability exceeds u
        choice = (cdf < uniform.unsqueeze(-1)).sum(-1, keepdim=True).clamp(max=self.k - 1)
        return top_ids.gather(-1, choice).squeeze(-1), probs.gather(-1, choice).squeeze(-1)


def example(name: str, device: str, size: int = 0) -> tuple[nn.Module, tuple[Tensor, ...], object]:
    """(model, example inputs, dynamic_shapes) of one model; size varies the batch (tokens) for a second input."""
    g = torch.Generator().manual_seed(size)
    torch.manual_seed(0)  # the same weights every time
    if name == "moe":
        model: nn.Module = MoEModel()
        inputs: tuple[Tensor, ...] = (torch.randn(24 + size, 32, generator=g),)
        shapes: object = ({0: Dim("tokens", min=2, max=4096)},)
    elif name == "embedding":
        model = EmbeddingBagModel()
        batch = 6 + size
        lengths = torch.randint(1, 5, (batch,), generator=g)
        offsets = torch.cat([torch.zeros(1, dtype=torch.int64), lengths.cumsum(0)[:-1]])
        ids = torch.randint(0, 1000, (int(lengths.sum()),), generator=g)
        inputs = (ids, offsets)
        shapes = ({0: Dim("ids", min=2, max=1 << 20)}, {0: Dim("batch", min=2, max=1 << 16)})
    elif name == "sampling":
        model = TopKSamplingHead()
        batch = 5 + size
        inputs = (torch.randn(batch, 32, generator=g), torch.rand(batch, generator=g))
        dim = Dim("batch", min=2, max=4096)
        shapes = ({0: dim}, {0: dim})
    else:
        raise ValueError(f"unknown model {name!r}")
    model = model.to(device).eval()
    return model, tuple(t.to(device) for t in inputs), shapes


MODELS = ("moe", "embedding", "sampling")


def assert_same(got: object, want: object, what: str) -> None:
    got_list = list(got) if isinstance(got, (tuple, list)) else [got]
    want_list = list(want) if isinstance(want, (tuple, list)) else [want]
    assert len(got_list) == len(want_list), f"{what}: {len(got_list)} outputs, expected {len(want_list)}"
    for a, b in zip(got_list, want_list):
        assert a.shape == b.shape and a.dtype == b.dtype, f"{what}: {a.shape} {a.dtype} vs {b.shape} {b.dtype}"
        if a.is_floating_point():
            torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5, msg=lambda m: f"{what}: {m}")
        else:
            assert torch.equal(a, b), f"{what}: integer outputs differ"


def link_shared_libstdcxx() -> None:
    """Makes AOTInductor link its packages against the shared libstdc++ this process uses, where $CXX would
    link a static copy: a toolchain whose lib dir holds only libstdc++.a (`$CXX -print-file-name=libstdc++.so`
    finds nothing) puts libstdc++ into every package, and such a CUDA package crashes at load next to torch's
    shared libstdc++ (in std::regex, parsing the device string) - with or without gpuprim ops in it. Then CXX
    becomes a wrapper that adds that libstdc++.so.6 to each link of a shared object (`-x none` first, so that
    a language given earlier does not apply to it; never to compiles, e.g. Inductor's precompiled header, which
    would read the library as a header). Elsewhere it does nothing."""
    cxx = os.environ.get("CXX", "g++")
    try:
        found = subprocess.run([cxx, "-print-file-name=libstdc++.so"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return
    if os.path.isabs(found):
        return
    with open("/proc/self/maps") as maps:
        shared = next((line.split()[-1] for line in maps if "/libstdc++.so.6" in line), None)
    if shared is None:
        return
    wrapper = Path(tempfile.mkdtemp(prefix="gpuprim_cxx_")) / "g++"
    wrapper.write_text(
        "#!/bin/sh\n"
        f'case " $* " in *" -shared "*) ;; *) exec "{cxx}" "$@";; esac\n'
        f'exec "{cxx}" "$@" -x none -Wl,--push-state,--no-as-needed "{shared}" -Wl,--pop-state\n')
    wrapper.chmod(0o755)
    os.environ["CXX"] = str(wrapper)
    import torch._inductor.config as inductor_config  # read CXX when it was imported: set it there too

    inductor_config.cpp.cxx = (None, str(wrapper))
    print(f"note: {cxx} links libstdc++ statically; AOTInductor packages link {shared} instead (CXX={wrapper})")


def export_compile_check(name: str, device: str, out: Path, log: Callable[[str], None] = print) -> Path:
    """Exports one model both ways, compiles the non-strict program into out/<name>.pt2, checks the package in
    Python on two input sizes, and saves inputs + eager outputs of both for examples/cpp/aoti_main.cpp."""
    model, inputs, shapes = example(name, device)
    _, other_inputs, _ = example(name, device, size=7)
    with torch.no_grad():
        eager = model(*inputs)
        eager_other = model(*other_inputs)
        programs = {strict: torch.export.export(model, inputs, dynamic_shapes=shapes, strict=strict)
                    for strict in (True, False)}
    for strict, program in programs.items():
        mode = "strict" if strict else "non-strict"
        ops = sorted({str(n.target) for n in program.graph.nodes if str(n.target).startswith("gpuprim.")})
        assert ops, f"{name}: no gpuprim op in the {mode} export"
        with torch.no_grad():
            assert_same(program.module()(*other_inputs), eager_other, f"{name} {mode} export")
        log(f"{name}: exported ({mode}; gpuprim ops {', '.join(ops)})")
    out.mkdir(parents=True, exist_ok=True)
    package = out / f"{name}.pt2"
    torch._inductor.aoti_compile_and_package(programs[False], package_path=str(package))
    compiled = torch._inductor.aoti_load_package(str(package))
    with torch.no_grad():
        assert_same(compiled(*inputs), eager, f"{name} AOTInductor package")
        assert_same(compiled(*other_inputs), eager_other, f"{name} AOTInductor package, other sizes")
    as_list = lambda t: list(t) if isinstance(t, (tuple, list)) else [t]  # noqa: E731
    cpu = lambda ts: [t.detach().cpu() for t in ts]  # noqa: E731
    torch.save({"inputs": cpu(inputs), "outputs": cpu(as_list(eager)),
                "other_inputs": cpu(other_inputs), "other_outputs": cpu(as_list(eager_other))},
               out / f"{name}.io.pt", _use_new_zipfile_serialization=True)
    log(f"{name}: compiled to {package}, matches eager")
    return package


def export_compile_check_parallel(names: tuple[str, ...], device: str, out: Path, jobs: int,
                                  timeout: float | None = None) -> None:
    """export_compile_check of each model in its own process, `jobs` at a time (Inductor's compile of one
    model keeps about one core busy, so three models on a many-core machine take the time of one). Each
    process writes out/<name>.log (files, not pipes: a compile worker that outlives its parent cannot hold
    the call open); a failure or a timeout raises with the log's tail."""
    import concurrent.futures

    out.mkdir(parents=True, exist_ok=True)

    def one(name: str) -> tuple[str, int | None]:
        log = out / f"{name}.log"
        with open(log, "w") as stream:
            process = subprocess.Popen([sys.executable, "-u", "-X", "faulthandler", __file__, "--device", device,
                                        "--out", str(out), "--models", name], stdout=stream, stderr=subprocess.STDOUT)
            try:
                return name, process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                process.send_signal(signal.SIGABRT)  # faulthandler writes every thread's stack into the log
                process.wait()
                return name, None

    with concurrent.futures.ThreadPoolExecutor(max(1, jobs)) as pool:
        for name, code in pool.map(one, names):
            if code != 0:
                what = f"timed out after {timeout} s" if code is None else f"exit {code}"
                raise RuntimeError(f"{name} on {device}: {what}\n{(out / f'{name}.log').read_text()[-6000:]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    parser.add_argument("--out", default="build/aoti", type=Path)
    parser.add_argument("--models", default=",".join(MODELS))
    args = parser.parse_args()
    link_shared_libstdcxx()
    for name in args.models.split(","):
        export_compile_check(name, args.device, args.out)
    print(f"packages in {args.out}; run them from C++: bash examples/cpp/build_and_run.sh {sys.executable} {args.out}")


if __name__ == "__main__":
    main()
