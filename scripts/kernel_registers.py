"""Registers, stack frame and resident blocks of every gpuprim kernel in a build, and what changed between two.

python3 scripts/kernel_registers.py LIB_OR_OBJECT [--before LIB_OR_OBJECT] [--match TEXT] [--threads 256]

Reads `cuobjdump --dump-resource-usage` (from --cuobjdump, $CUDA_HOME/bin, PATH or triton's bundled copy) and
prints one line per kernel: registers, stack bytes, static shared bytes, and the 256-thread blocks an SM can hold
by registers alone. With --before, only kernels whose registers or stack differ, matched by demangled name with
namespaces dropped (so code moved between namespaces still matches) and, for file-local kernels, their source
file's name; a change in resident blocks is marked.
Kernels of CUB's own namespace are left out.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, Optional, Tuple

Usage = Tuple[int, int, int]  # registers, stack bytes, static shared bytes
REGISTERS_PER_SM = 65536
MAX_THREADS_PER_SM = 2048


def find_cuobjdump(given: Optional[str]) -> str:
    candidates = [given, os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", "cuobjdump"),
                  shutil.which("cuobjdump")]
    try:
        import triton  # noqa: PLC0415 - only a fallback location of the tool
        candidates.append(str(Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "cuobjdump"))
    except ImportError:
        pass
    for path in candidates:
        if path and os.access(path, os.X_OK):
            return path
    sys.exit("cuobjdump not found: pass --cuobjdump PATH")


def strip_parameters(name: str) -> str:
    depth = 0
    for i, ch in enumerate(name):
        depth += ch == "<"
        depth -= ch == ">"
        if ch == "(" and depth == 0:
            return name[:i]
    return name


def kernel_usage(binary: str, cuobjdump: str) -> Dict[str, Usage]:
    text = subprocess.run([cuobjdump, "--dump-resource-usage", binary], capture_output=True, text=True,
                          check=True).stdout
    mangled, usage = [], []
    current = None
    for line in text.splitlines():
        found = re.search(r"Function (\S+):", line)
        if found:
            current = found.group(1)
        elif current and "REG:" in line:
            fields = {key: int(value) for key, value in re.findall(r"(REG|STACK|SHARED):(\d+)", line)}
            mangled.append(current)
            usage.append((fields.get("REG", 0), fields.get("STACK", 0), fields.get("SHARED", 0)))
            current = None
    names = subprocess.run(["c++filt"], input="\n".join(mangled), capture_output=True, text=True,
                           check=True).stdout.splitlines()
    kernels = {}
    for symbol, name, used in zip(mangled, names, usage):
        name = strip_parameters(name.replace("(anonymous namespace)::", "")).replace("void ", "")
        if re.match(r"(gpuprim_)?cub::", name):
            continue
        source = re.search(r"_GLOBAL__N__[0-9a-f]+_\d+_(\w+?)_cu_", symbol)  # a file-local kernel's source file
        kernels[(source.group(1) + ".cu: " if source else "") + re.sub(r"\w+::", "", name)] = used
    return kernels


def resident_blocks(registers: int, threads: int) -> int:
    allocated = -(-max(registers, 1) // 8) * 8  # registers are allocated per thread in units of 8
    return min(MAX_THREADS_PER_SM // threads, REGISTERS_PER_SM // (allocated * threads))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binary", help="libgpuprim.so or one object file")
    parser.add_argument("--before", help="a second build to compare with")
    parser.add_argument("--match", default="", help="only kernels whose name contains this")
    parser.add_argument("--threads", type=int, default=256, help="block size for the resident-blocks column")
    parser.add_argument("--cuobjdump", default=None)
    args = parser.parse_args()
    tool = find_cuobjdump(args.cuobjdump)
    after = {k: v for k, v in kernel_usage(args.binary, tool).items() if args.match in k}
    if not args.before:
        for name, (reg, stack, shared) in sorted(after.items()):
            blocks = resident_blocks(reg, args.threads)
            print(f"{reg:4d} reg {stack:4d} stack {shared:6d} shared {blocks} blocks  {name}")
        return
    before = {k: v for k, v in kernel_usage(args.before, tool).items() if args.match in k}
    print(f"{len(before)} kernels before, {len(after)} after, {len(before.keys() & after.keys())} in both")
    for name in sorted(before.keys() & after.keys()):
        (reg0, stack0, _), (reg1, stack1, _) = before[name], after[name]
        if (reg0, stack0) == (reg1, stack1):
            continue
        blocks0, blocks1 = resident_blocks(reg0, args.threads), resident_blocks(reg1, args.threads)
        mark = "  <- resident blocks" if blocks0 != blocks1 else ""
        print(f"{reg0:4d} -> {reg1:4d} reg, stack {stack0} -> {stack1}, blocks {blocks0} -> {blocks1}{mark}  {name}")


if __name__ == "__main__":
    main()
