"""scripts/run_tests_isolated.py's sanitizer counts: errors in PyTorch's own kernels are counted apart from
gpuprim's, and anything it cannot attribute counts as gpuprim's."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import run_tests_isolated  # noqa: E402

TORCH_REPORT = """========= Uninitialized __global__ memory read of size 8 bytes
=========     at void at_cuda_detail::cub::detail::scan::DeviceScanKernel<long>(T2, T3)+0x2a0
=========     by thread (15,0,0) in block (0,0,0)
=========
"""
GPUPRIM_REPORT = """========= Invalid __global__ read of size 4 bytes
=========     at void gpuprim::topk_rows::filter::filter_topk_kernel<unsigned int>(int)+0x120
=========     by thread (3,0,0) in block (7,0,0)
=========
"""
RACE_REPORT = """========= Error: Race reported between Write access at void gpuprim::k()+0x10
=========     and Read access at void gpuprim::k()+0x20 [4 hazards]
=========
"""


def write(folder: Path, name: str, text: str) -> None:
    (folder / name).write_text("========= COMPUTE-SANITIZER\n" + text)


def test_errors_in_pytorch_kernels_are_counted_apart(tmp_path):
    write(tmp_path, "test_x.part1.initcheck.11.log", TORCH_REPORT * 2 + GPUPRIM_REPORT
          + "========= ERROR SUMMARY: 3 errors\n")
    write(tmp_path, "test_x.part1.rerun1.initcheck.12.log", TORCH_REPORT + "========= ERROR SUMMARY: 1 error\n")
    write(tmp_path, "test_y.part1.initcheck.13.log", TORCH_REPORT)  # cut: no summary, its reports are counted
    assert run_tests_isolated.sanitizer_errors(tmp_path, "test_x.part1", "initcheck") == (1, 3, 2)
    assert run_tests_isolated.sanitizer_errors(tmp_path, "test_y.part1", "initcheck") == (0, 1, 1)


def test_unattributed_errors_count_as_gpuprims(tmp_path):
    # Past the printed reports (--print-limit), and reports without an "at" frame (racecheck's), are gpuprim's.
    write(tmp_path, "test_z.racecheck.21.log", RACE_REPORT + "========= ERROR SUMMARY: 1 error\n")
    write(tmp_path, "test_w.initcheck.22.log", TORCH_REPORT + "========= ERROR SUMMARY: 60 errors\n")
    assert run_tests_isolated.sanitizer_errors(tmp_path, "test_z", "racecheck") == (1, 0, 1)
    assert run_tests_isolated.sanitizer_errors(tmp_path, "test_w", "initcheck") == (59, 1, 1)
