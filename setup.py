"""pip entry point: drives the CMake build (CMakeLists.txt is the single build description).

    pip install --no-build-isolation -e .          # development (make build)
    pip wheel --no-build-isolation --no-deps .     # a binary wheel (make wheel)

Environment:
    GPUPRIM_WITH_CUDA     1 (default): compile the CUDA kernels when nvcc is found; 0: CPU-only library;
                          auto: CUDA only when this machine has a GPU (make quickstart); force: CUDA, and fail
                          without nvcc.
    TORCH_CUDA_ARCH_LIST  GPU architectures, e.g. "9.0" or "8.0;9.0;10.0+PTX". Default: the architectures of
                          this machine's GPUs, or 8.0;9.0;10.0+PTX where there is none.
    MAX_JOBS              parallel compile jobs.
    GPUPRIM_BUILD_DIR (default build/cmake), GPUPRIM_BUILD_TYPE (Release), GPUPRIM_OPS (development: only
    these op folders get kernels).

The wheel (non-editable builds) holds lib/libgpuprim.so with a RUNPATH relative to the installed torch
package, lib/gpuprim_build.json (what it was built against, checked by `import gpuprim`), requires the torch
minor version it was compiled against, and is tagged py3-none-<platform>: the library uses no Python C API.
"""
import functools
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # setuptools < 70
    from wheel.bdist_wheel import bdist_wheel

ROOT = Path(__file__).resolve().parent
PACKAGE_DIR = ROOT / "torch_ops" / "gpuprim"
DEFAULT_ARCH_LIST = "8.0;9.0;10.0+PTX"
LIBRARY_EXTENSION = "gpuprim.lib.libgpuprim"  # the built library itself stands in for the extension


def _version() -> str:
    """gpuprim.__version__, read from its one home without importing the package."""
    text = (PACKAGE_DIR / "_version.py").read_text()
    return re.search(r'^__version__ = "([^"]+)"', text, re.M).group(1)


def _torch_version() -> tuple[str, str]:
    """(torch.__version__, torch.version.cuda or '') of the torch this build compiles against."""
    import torch

    return torch.__version__, torch.version.cuda or ""


def _torch_requirement() -> str:
    """The torch minor version the binary is tied to, e.g. torch==2.11.* (its C++ ABI changes between minors)."""
    major, minor = re.match(r"(\d+)\.(\d+)", _torch_version()[0]).groups()
    return f"torch=={major}.{minor}.*"


def _local_version() -> str:
    """+pt211cu130 / +pt211cpu: tells apart wheels of one release built for several torch / CUDA versions."""
    torch_version, torch_cuda = _torch_version()
    major, minor = re.match(r"(\d+)\.(\d+)", torch_version).groups()
    with_cuda = _cuda_choice()[0] and _find_nvcc()
    cuda = f"cu{torch_cuda.replace('.', '')}" if with_cuda and torch_cuda else "cpu"
    return f"pt{major}{minor}{cuda}"


def _find_nvcc() -> str:
    return os.environ.get("CUDACXX") or shutil.which("nvcc") or (
        "/usr/local/cuda/bin/nvcc" if Path("/usr/local/cuda/bin/nvcc").exists() else "")


def _gpu_capabilities() -> list[str]:
    """Compute capabilities of this machine's GPUs ("9.0", ...): through torch, else nvidia-smi."""
    try:
        import torch

        if torch.cuda.is_available():
            return sorted({"%d.%d" % torch.cuda.get_device_capability(i) for i in range(torch.cuda.device_count())})
    except Exception:
        pass
    try:
        result = subprocess.run(["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"],
                                capture_output=True, text=True, timeout=30)
        return sorted({line.strip() for line in result.stdout.splitlines() if re.fullmatch(r"\d+\.\d+", line.strip())})
    except (OSError, subprocess.SubprocessError):
        return []


@functools.lru_cache(maxsize=None)
def _cuda_choice() -> tuple[bool, bool, str]:
    """(compile CUDA, fail without nvcc, architectures) from GPUPRIM_WITH_CUDA and TORCH_CUDA_ARCH_LIST."""
    mode = os.environ.get("GPUPRIM_WITH_CUDA", "1").lower()
    if mode not in ("0", "1", "auto", "force"):
        raise SystemExit(f"gpuprim: GPUPRIM_WITH_CUDA must be 0, 1, auto or force, got {mode!r}")
    if mode == "0":
        _say("building the CPU-only library (GPUPRIM_WITH_CUDA=0)")
        return False, False, ""
    gpus = _gpu_capabilities()
    if mode == "auto" and not gpus:
        _say("no GPU found: building the CPU-only library (the reference kernels). "
             "To compile the CUDA kernels anyway: GPUPRIM_WITH_CUDA=force (make quickstart CUDA=1).")
        return False, False, ""
    arch_list = os.environ.get("TORCH_CUDA_ARCH_LIST", "").strip()
    if arch_list:
        _say(f"CUDA kernels for TORCH_CUDA_ARCH_LIST={arch_list}")
    else:
        arch_list = ";".join(gpus) if gpus else DEFAULT_ARCH_LIST
        why = "this machine's GPU" if gpus else "no GPU here: the default list"
        _say(f"CUDA kernels for {arch_list} ({why}; TORCH_CUDA_ARCH_LIST overrides)")
    return True, mode == "force", arch_list


def _say(message: str) -> None:
    print(f"gpuprim: {message}", file=sys.stderr, flush=True)


def _tool(name: str) -> str:
    """The cmake/ninja that pip installed next to this Python (requirements-build.txt), else PATH's."""
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.exists() else (shutil.which(name) or name)


class CMakeBuild(build_ext):
    """Configures and builds libgpuprim.so with CMake + ninja; the library is the package's one extension."""

    def get_ext_filename(self, fullname):
        # Called with the full name and (by get_ext_fullpath) with its last part: no Python-ABI suffix either way.
        if LIBRARY_EXTENSION.endswith(fullname):
            return os.path.join(*fullname.split(".")) + ".so"
        return super().get_ext_filename(fullname)

    def build_extension(self, ext):
        build_dir = Path(os.environ.get("GPUPRIM_BUILD_DIR", ROOT / "build" / "cmake"))
        build_dir.mkdir(parents=True, exist_ok=True)
        with_cuda, require_cuda, arch_list = _cuda_choice()
        # Wheels are installed next to some torch in site-packages, found through $ORIGIN; other builds
        # (editable installs, `setup.py build_ext`) run from the checkout against this environment's torch.
        relocatable = "bdist_wheel" in self.distribution.commands or os.environ.get("GPUPRIM_RELOCATABLE") == "1"
        configure = [
            _tool("cmake"), "-S", str(ROOT), "-B", str(build_dir), "-G", "Ninja",
            f"-DCMAKE_MAKE_PROGRAM={_tool('ninja')}",
            f"-DPython3_EXECUTABLE={sys.executable}",
            f"-DCMAKE_BUILD_TYPE={os.environ.get('GPUPRIM_BUILD_TYPE', 'Release')}",
            f"-DGPUPRIM_OPS={os.environ.get('GPUPRIM_OPS', '*')}",
            f"-DGPUPRIM_WITH_CUDA={'ON' if with_cuda else 'OFF'}",
            f"-DGPUPRIM_REQUIRE_CUDA={'ON' if require_cuda else 'OFF'}",
            f"-DGPUPRIM_RELOCATABLE={'ON' if relocatable else 'OFF'}",
        ]
        if with_cuda:
            configure.append(f"-DTORCH_CUDA_ARCH_LIST={arch_list}")
        subprocess.run(configure, check=True)
        # ninja prints one "[done/total] Building ..." line per file: the progress of a long first build.
        build = [_tool("cmake"), "--build", str(build_dir)]
        if os.environ.get("MAX_JOBS"):
            build += ["--parallel", os.environ["MAX_JOBS"]]
        subprocess.run(build, check=True)
        # Into the wheel's tree, and next to the sources, which `import gpuprim` loads in a checkout (editable
        # installs, PYTHONPATH=torch_ops, scripts/gpu_runner.sh's `setup.py build_ext`).
        library = Path(self.get_ext_fullpath(ext.name))
        info = json.loads((build_dir / "gpuprim_build.json").read_text())
        for target in {library.parent, PACKAGE_DIR / "lib"}:
            target.mkdir(parents=True, exist_ok=True)
            shutil.copy2(build_dir / "libgpuprim.so", target / "libgpuprim.so")
            (target / "gpuprim_build.json").write_text(json.dumps(info) + "\n")


class PlatformWheel(bdist_wheel):
    """py3-none-<platform>: one wheel serves every Python, because the library uses no Python C API (it is
    loaded with torch.ops.load_library). `make wheel` then sets the manylinux tag that auditwheel reports."""

    def finalize_options(self):
        super().finalize_options()
        self.root_is_pure = False

    def get_tag(self):
        _, _, platform = super().get_tag()
        return "py3", "none", platform


setup(
    version=f"{_version()}+{_local_version()}" if os.environ.get("GPUPRIM_LOCAL_VERSION", "1") != "0"
    else _version(),
    install_requires=[_torch_requirement()],
    packages=["gpuprim", "gpuprim.distributed"],
    package_dir={"gpuprim": "torch_ops/gpuprim"},
    ext_modules=[Extension(LIBRARY_EXTENSION, sources=[])],
    cmdclass={"build_ext": CMakeBuild, "bdist_wheel": PlatformWheel},
    zip_safe=False,
)
