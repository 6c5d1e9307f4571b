"""pip entry point: drives the CMake build (CMakeLists.txt is the single build description).

    pip install --no-build-isolation -e .

Environment: TORCH_CUDA_ARCH_LIST (default "8.0;9.0;10.0+PTX"), MAX_JOBS (parallel compile jobs),
GPUPRIM_WITH_CUDA=0 to force a CPU-only build, GPUPRIM_BUILD_DIR (default build/cmake).
"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
PACKAGE_DIR = ROOT / "torch_ops" / "gpuprim"


def _tool(name: str) -> str:
    """The cmake/ninja that pip installed next to this Python (requirements-dev.txt), else PATH's."""
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.exists() else (shutil.which(name) or name)


class CMakeBuild(build_ext):
    """Configures and builds libgpuprim.so with CMake + ninja and places it inside the package."""

    def build_extension(self, ext):
        build_dir = Path(os.environ.get("GPUPRIM_BUILD_DIR", ROOT / "build" / "cmake"))
        build_dir.mkdir(parents=True, exist_ok=True)
        configure = [
            _tool("cmake"), "-S", str(ROOT), "-B", str(build_dir), "-G", "Ninja",
            f"-DCMAKE_MAKE_PROGRAM={_tool('ninja')}",
            f"-DPython3_EXECUTABLE={sys.executable}",
            f"-DCMAKE_BUILD_TYPE={os.environ.get('GPUPRIM_BUILD_TYPE', 'Release')}",
            f"-DGPUPRIM_OPS={os.environ.get('GPUPRIM_OPS', '*')}",
            f"-DGPUPRIM_WITH_CUDA={'OFF' if os.environ.get('GPUPRIM_WITH_CUDA') == '0' else 'ON'}",
        ]
        subprocess.run(configure, check=True)
        build = [_tool("cmake"), "--build", str(build_dir)]
        if os.environ.get("MAX_JOBS"):
            build += ["--parallel", os.environ["MAX_JOBS"]]
        subprocess.run(build, check=True)
        library = build_dir / "libgpuprim.so"
        # The package loads lib/libgpuprim.so; copy it next to the sources (editable installs
        # import from there) and into the wheel's build tree.
        for target in {PACKAGE_DIR / "lib", Path(self.build_lib) / "gpuprim" / "lib"}:
            target.mkdir(parents=True, exist_ok=True)
            shutil.copy2(library, target / library.name)
        # setuptools expects the extension's own file; an empty marker keeps it satisfied.
        marker = Path(self.get_ext_fullpath(ext.name))
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_bytes(b"")


setup(
    name="gpuprim",
    version="0.1.0",
    description="CUDA primitives and training operators for PyTorch",
    packages=["gpuprim"],
    package_dir={"gpuprim": "torch_ops/gpuprim"},
    package_data={"gpuprim": ["lib/*.so"]},
    ext_modules=[Extension("gpuprim._build_marker", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    python_requires=">=3.10",
    zip_safe=False,
)
