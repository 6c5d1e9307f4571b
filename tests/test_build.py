"""Build variants: a CPU-only build (no CUDA toolkit) must configure, compile, load and run."""
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHECK_CPU_ONLY_LIBRARY = """
import sys, torch
torch.ops.load_library(sys.argv[1])
x = torch.arange(5.)
assert torch.equal(torch.ops.gpuprim.cumsum(x), torch.cumsum(x, 0))
# CUDA inputs reach a kernel that raises a clear error instead of the dispatcher's generic one.
assert torch._C._dispatch_has_kernel_for_dispatch_key("gpuprim::cumsum", "CUDA")
assert torch._C._dispatch_has_kernel_for_dispatch_key("gpuprim::bincount", "CUDA")
print("cpu-only build ok")
"""


def test_cpu_only_build(tmp_path):
    cmake = Path(sys.executable).parent / "cmake"
    cmake = str(cmake) if cmake.exists() else "cmake"
    configure = [cmake, "-S", str(ROOT), "-B", str(tmp_path), "-G", "Ninja", f"-DPython3_EXECUTABLE={sys.executable}",
                 "-DGPUPRIM_WITH_CUDA=OFF"]
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}:{os.environ['PATH']}")
    for command in (configure, [cmake, "--build", str(tmp_path)]):
        result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=1800)
        errors = [line for line in (result.stdout + result.stderr).splitlines() if "error" in line.lower()]
        assert result.returncode == 0, "\n".join(errors[:20]) + "\n" + result.stdout[-2000:] + result.stderr[-2000:]
    result = subprocess.run([sys.executable, "-c", CHECK_CPU_ONLY_LIBRARY, str(tmp_path / "libgpuprim.so")],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "cpu-only build ok" in result.stdout
    assert not list(tmp_path.glob("CMakeFiles/gpuprim.dir/**/*.cu.o")), "a CPU-only build compiled CUDA code"


def test_library_uses_the_shared_libstdcxx():
    """A static libstdc++ inside libgpuprim.so (the H200 machine's CXX has only libstdc++.a in its
    own lib dir) gives a second copy of iostreams whose locale is never set up: the first
    error message that formats a number segfaults. Its symbols must not be defined in our library."""
    import gpuprim

    library = Path(gpuprim.__file__).parent / "lib" / "libgpuprim.so"
    result = subprocess.run(["nm", "-D", "--defined-only", "-C", str(library)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    own_copies = [line for line in result.stdout.splitlines()
                  if "std::codecvt<" in line or "std::basic_ostream<char, std::char_traits<char> >::_M_insert" in line]
    assert not own_copies, f"libgpuprim.so defines libstdc++ internals (static libstdc++): {own_copies[:3]}"
