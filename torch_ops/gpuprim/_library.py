"""Loads libgpuprim.so, after checking that it fits this process.

A C++ operator library works only with the torch minor version it was compiled against, needs torch's CUDA
runtime when it has CUDA kernels, and runs on the GPU architectures it was compiled for. The build records
those facts in ``lib/gpuprim_build.json`` (CMakeLists.txt writes it, setup.py installs it); this module
compares them with the running torch before loading, so a mismatch is an ImportError that says what to do
instead of an undefined symbol, and a GPU the build has no kernels for gets a warning when CUDA starts.
"""
from __future__ import annotations

import json
import re
import warnings
from pathlib import Path
from typing import Any, Optional

import torch

LIBRARY = Path(__file__).resolve().parent / "lib" / "libgpuprim.so"
BUILD_INFO = LIBRARY.with_name("gpuprim_build.json")
REBUILD = ("or build gpuprim against the torch you have: `pip install --no-build-isolation -e .` in a checkout "
           "(or `make build`; see README, Install)")


def build_info() -> Optional[dict[str, Any]]:
    """What the loaded library was built against, or None where the build did not record it.

    Keys: ``version`` (gpuprim), ``torch`` (torch.__version__ at build time), ``torch_cuda`` (its
    torch.version.cuda, None for a CPU-only torch), ``cuda`` (nvcc's version, None for a CPU-only build) and
    ``cuda_architectures`` (TORCH_CUDA_ARCH_LIST style, e.g. ``["9.0", "10.0+PTX"]``; empty without CUDA).
    """
    try:
        return json.loads(BUILD_INFO.read_text())
    except (OSError, ValueError):
        return None


def _minor_version(version: str) -> str:
    match = re.match(r"(\d+)\.(\d+)", version)
    return f"{match.group(1)}.{match.group(2)}" if match else version


def _major(version: str) -> str:
    return version.split(".")[0]


def check_torch(info: dict[str, Any]) -> None:
    """Raises ImportError where the running torch cannot load a library built as ``info`` says."""
    built, running = info.get("torch"), torch.__version__
    ours = f"gpuprim {info.get('version', '')}".strip()
    if built and _minor_version(built) != _minor_version(running):
        raise ImportError(
            f"{ours} was built for torch {built}, but torch {running} is loaded; a C++ operator library works only "
            f"with the torch minor version it was compiled against. Install gpuprim built for torch "
            f"{_minor_version(running)} (README, Wheels), or install torch=={_minor_version(built)}.*, {REBUILD}.")
    if info.get("cuda") and torch.version.cuda is None:
        raise ImportError(
            f"{ours} has CUDA kernels (built with CUDA {info['cuda']} for torch {built}) and needs a CUDA build of "
            f"torch, but torch {running} has no CUDA runtime. Install the CUDA build of torch {built}, or build "
            "the CPU-only gpuprim: `GPUPRIM_WITH_CUDA=0 pip install --no-build-isolation -e .` (`make build CUDA=0`).")
    built_cuda, running_cuda = info.get("torch_cuda"), torch.version.cuda
    if info.get("cuda") and built_cuda and running_cuda and _major(built_cuda) != _major(running_cuda):
        raise ImportError(
            f"{ours} was built for torch {built} with CUDA {built_cuda}, but torch {running} uses CUDA {running_cuda}: "
            f"the CUDA runtimes differ (libcudart.so.{_major(built_cuda)} vs .{_major(running_cuda)}). Install "
            f"gpuprim built for CUDA {_major(running_cuda)}, {REBUILD}.")


def _explain_load_error(error: OSError, info: Optional[dict[str, Any]]) -> str:
    detail = " ".join(str(e) for e in (error, error.__cause__) if e is not None)
    built = f"torch {info['torch']}" if info and info.get("torch") else "another torch"
    if "undefined symbol" in detail:
        return (f"gpuprim: {LIBRARY} does not match the loaded torch {torch.__version__} (it was built against "
                f"{built}): {detail}. Install the gpuprim build for this torch, {REBUILD}.")
    if re.search(r"lib(cudart|c10_cuda|torch_cuda)\S*: cannot open shared object file", detail):
        return (f"gpuprim: {LIBRARY} has CUDA kernels and needs torch's CUDA runtime, which this process cannot "
                f"find ({detail}). Install the CUDA build of torch it was built for ({built}), or build the "
                "CPU-only gpuprim: `GPUPRIM_WITH_CUDA=0 pip install --no-build-isolation -e .`.")
    return f"gpuprim: cannot load {LIBRARY}: {detail}. Reinstall gpuprim, {REBUILD}."


def _parse_arch(arch: str) -> Optional[tuple[int, int, str, bool]]:
    """'9.0' -> (9, 0, '', False); '10.0+PTX' -> (10, 0, '', True); '9.0a' -> (9, 0, 'a', False)."""
    match = re.fullmatch(r"(\d+)\.(\d+)([af]?)(\+PTX)?", arch.strip())
    if not match:
        return None
    return int(match.group(1)), int(match.group(2)), match.group(3), bool(match.group(4))


def runs_on(capability: tuple[int, int], architectures: list[str]) -> bool:
    """Whether a build for ``architectures`` has code a GPU of this compute capability can run: machine code
    of the same major version and an equal or lower minor one (an 'a' variant: the same GPU only), or PTX of
    an equal or lower version (JIT-compiled by the driver)."""
    for arch in architectures:
        parsed = _parse_arch(arch)
        if parsed is None:
            return True  # an entry this check does not understand: do not warn on a guess
        major, minor, variant, ptx = parsed
        if variant == "a" and (major, minor) == capability:
            return True
        if variant != "a" and major == capability[0] and minor <= capability[1]:
            return True
        if ptx and (major, minor) <= capability:
            return True
    return False


def _warn_about_unsupported_gpus(architectures: list[str]) -> None:
    try:
        for index in range(torch.cuda.device_count()):
            capability = torch.cuda.get_device_capability(index)
            if not runs_on(capability, architectures):
                warnings.warn(
                    f"gpuprim: GPU {index} ({torch.cuda.get_device_name(index)}) has compute capability "
                    f"{capability[0]}.{capability[1]}, but this gpuprim build has kernels for "
                    f"{', '.join(architectures)} only: its CUDA ops will fail with 'no kernel image is available'. "
                    f"Rebuild with TORCH_CUDA_ARCH_LIST=\"{capability[0]}.{capability[1]}\" "
                    "(`pip install --no-build-isolation -e .`), or install a wheel built for this GPU.",
                    RuntimeWarning, stacklevel=2)
    except Exception:  # a check must never break CUDA's initialization
        pass


def load() -> None:
    """Checks the recorded build against this process, then registers torch.ops.gpuprim.*."""
    if not LIBRARY.exists():
        raise ImportError(f"gpuprim: compiled library not found at {LIBRARY}; build it with "
                          "`pip install --no-build-isolation -e .` (or `make build`), or install a gpuprim wheel")
    info = build_info()
    if info is not None:
        check_torch(info)
    try:
        torch.ops.load_library(str(LIBRARY))
    except OSError as error:
        raise ImportError(_explain_load_error(error, info)) from error
    architectures = (info or {}).get("cuda_architectures") or []
    if architectures and torch.version.cuda is not None:
        # At CUDA's first use (at once if it is already up): reading device properties here would start CUDA
        # at import time, which breaks fork()-based workers.
        torch.cuda._lazy_call(lambda: _warn_about_unsupported_gpus(architectures))
