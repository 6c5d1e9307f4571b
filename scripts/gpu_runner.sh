#!/usr/bin/env bash
# The GPU runner: on a CUDA machine where torch is installed and nothing can be downloaded,
# build gpuprim, run the whole test suite with CUDA, run the benchmarks, and write logs, results
# JSON and plots under OUT_DIR. A build with every op, the whole test suite and every benchmark take more
# than one 10-minute device call together: split them (README), and give RUN_SECONDS.
#
#   bash scripts/gpu_runner.sh OUT_DIR
#
# Environment: PYTHON (default python3), TORCH_CUDA_ARCH_LIST (default 9.0), TESTS (test files or
# op names, e.g. "cumsum tests/test_sort.py"; default all; "none" skips the tests), BENCH (comma list of ops for benchmarks/run_all.py --only, default all; "none"
# skips), BENCH_QUICK=1 (small sizes), TEST_TIMEOUT / BENCH_TIMEOUT (seconds per phase),
# RUN_SECONDS (the whole run's limit, e.g. the device call's: later phases shrink to end inside it),
# TEST_JOBS (test processes run at once), TEST_CHUNKS (each file's tests spread over this many processes),
# TEST_FILE_TIMEOUT, BENCH_OP_TIMEOUT (seconds),
# GPUPRIM_TEST_DEVICES (default cuda: the CPU variants of device-parametrized tests run in CI;
# cpu,cuda runs both), SANITIZE=memcheck|racecheck|synccheck|initcheck (below), PREBUILT (below),
# COMPARE=DIR (benchmarks of the ops in BENCH run with the tree in DIR too, side by side:
# benchmarks/compare_trees.py; its table is compare.md; COMPARE_ROUNDS=N alternates which tree runs first).
#
# Wheels in .whl/ (the device image lacks expecttest, which tests/test_torch_samples.py needs: carry .whl with
# `pip download --no-deps --only-binary=:all: --python-version 3.12 -d .whl expecttest`) are installed with
# pip --no-index into a temporary directory on PYTHONPATH first.
#
# PREBUILT=FILE.so.xz: a libgpuprim.so built elsewhere for this machine's torch (same torch version and CUDA
# major; e.g. built on a CPU machine against the same torch wheel) is unpacked instead of building here,
# which saves the build's minutes of device time; if it does not import, the runner builds after all.
#
# SANITIZE=<tool>: every test file's pytest process runs under `compute-sanitizer --tool <tool>` at small
# shapes (GPUPRIM_TEST_SMALL=1: tests/conftest.py leaves out the > 2^31-element tests), benchmarks off by
# default, longer timeouts; 0 errors expected (errors whose first frame is a PyTorch kernel, e.g. in a test's
# torch reference, are counted apart: scripts/run_tests_isolated.py). Each process's report goes to
# test_logs.tar.gz, the counts and the first errors to sanitizer_summary.txt. The caching allocator stays on
# (CUDA graph capture needs it), so memcheck sees accesses outside PyTorch's segments, not past a tensor into a
# neighbour in the same segment; SANITIZE_NO_CACHING=1 sets PYTORCH_NO_CUDA_MEMORY_CACHING=1 for that (graph
# tests fail).
# PyTorch's own kernels (names containing "native") are left uninstrumented (GPUPRIM_SANITIZER_ARGS overrides),
# except under initcheck (it cannot see an uninstrumented kernel's writes, so every read of a tensor that torch
# filled would be reported), and pytest deselects compile, opcheck and graph_capture tests (PYTEST_ADDOPTS
# overrides): the first two repeat kernels other tests check, and autograd's backward inside a capture fails under
# the sanitizer with torch ops alone (scripts/capture_probe.py), which then poisons the rest of the file.
# OUT_DIR gets at most a handful of files (the device tool returns <= 8): summary.txt,
# build.log, tests.log, bench.log, bench_summary.md, test_logs.tar.gz (per-test-file logs),
# bench_results.tar.gz (benchmark JSON + PNG) and, with SANITIZE, sanitizer_summary.txt.
set -uo pipefail
out=${1:?usage: gpu_runner.sh OUT_DIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
python=${PYTHON:-python3}
export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0}
export MAX_JOBS=${MAX_JOBS:-$(nproc)}
export PYTHONPATH="$root/torch_ops${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONUNBUFFERED=1
if ls .whl/*.whl >/dev/null 2>&1; then
  site=$(mktemp -d)
  "$python" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$site" .whl/*.whl \
    && export PYTHONPATH="$PYTHONPATH:$site"
fi
# The CUDA variants of device-parametrized tests (plus every GPU-only test); CI runs the CPU ones.
export GPUPRIM_TEST_DEVICES=${GPUPRIM_TEST_DEVICES:-cuda}
sanitize=${SANITIZE:-}
if [ -n "$sanitize" ]; then
  case "$sanitize" in memcheck|racecheck|synccheck|initcheck) ;;
    *) echo "SANITIZE must be memcheck, racecheck, synccheck or initcheck, got '$sanitize'" >&2; exit 2 ;; esac
  command -v compute-sanitizer >/dev/null || export PATH="$PATH:${CUDA_HOME:-/usr/local/cuda}/bin"
  export GPUPRIM_TEST_SMALL=1
  export TORCHINDUCTOR_COMPILE_THREADS=1  # no compile worker processes to sanitize
  [ "${SANITIZE_NO_CACHING:-0}" = 1 ] && export PYTORCH_NO_CUDA_MEMORY_CACHING=1
  default_args=$([ "$sanitize" = initcheck ] || echo "--kernel-name-exclude kns=native")
  export GPUPRIM_SANITIZER_ARGS=${GPUPRIM_SANITIZER_ARGS-$default_args}
  export PYTEST_ADDOPTS=${PYTEST_ADDOPTS-"-k 'not compile and not opcheck and not graph_capture'"}
  BENCH=${BENCH:-none}
  TEST_TIMEOUT=${TEST_TIMEOUT:-480}
  TEST_FILE_TIMEOUT=${TEST_FILE_TIMEOUT:-450}
  TEST_CHUNKS=${TEST_CHUNKS:-4}  # a file takes minutes under a sanitizer: spread it over processes
fi
work=$(mktemp -d)
summary="$out/summary.txt"
phase() { echo "== $(date +%T) $*" | tee -a "$summary"; }

phase "machine"
{ nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.mem,driver_version --format=csv,noheader
  "$python" -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, torch.cuda.get_device_name())"
  nvcc --version | tail -1; } 2>&1 | tee -a "$summary"

prebuilt_ok=0
if [ -n "${PREBUILT:-}" ]; then
  phase "prebuilt library $PREBUILT"
  mkdir -p torch_ops/gpuprim/lib && xz -dc "$PREBUILT" >torch_ops/gpuprim/lib/libgpuprim.so \
    && "$python" -c "import gpuprim, torch; assert torch.ops.gpuprim.cumsum" >"$out/build.log" 2>&1 && prebuilt_ok=1
  [ $prebuilt_ok = 1 ] && echo "prebuilt library imports" | tee -a "$summary" \
    || { tail -5 "$out/build.log" | tee -a "$summary"; echo "prebuilt library unusable: building" | tee -a "$summary"; }
fi
[ $prebuilt_ok = 1 ] || {
phase "build (TORCH_CUDA_ARCH_LIST=$TORCH_CUDA_ARCH_LIST, $MAX_JOBS jobs)"
start=$SECONDS
if ! "$python" setup.py -q build_ext >"$out/build.log" 2>&1; then
  tail -30 "$out/build.log" | tee -a "$summary"
  phase "BUILD FAILED"; exit 1
fi
echo "built in $((SECONDS - start))s" | tee -a "$summary"
# Link diagnostics: a static libstdc++ inside the library crashed error messages once (see CMakeLists.txt).
cxx=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "${GPUPRIM_BUILD_DIR:-build/cmake}/CMakeCache.txt")
{ echo "CXX='${CXX:-}' ($cxx: $($cxx --version | head -1)) LDFLAGS='${LDFLAGS:-}' CXXFLAGS='${CXXFLAGS:-}'"
  echo "its libstdc++: .so -> $($cxx -print-file-name=libstdc++.so) .a -> $($cxx -print-file-name=libstdc++.a)"
  grep -h "gpuprim: libstdc++" "$out/build.log"
  echo "libstdc++ internals defined in libgpuprim.so: $(nm -D --defined-only -C torch_ops/gpuprim/lib/libgpuprim.so | grep -c 'std::codecvt<')"
  ldd torch_ops/gpuprim/lib/libgpuprim.so | grep -E "stdc|cudart"
  ninja -C "${GPUPRIM_BUILD_DIR:-build/cmake}" -t commands gpuprim 2>/dev/null | tail -1 | cut -c1-1500; } >>"$summary" 2>&1
}
if [ "${BENCH:-all}" != "none" ] && [ -z "${COMPARE:-}" ]; then  # the CUB harness builds while the tests run
  (bash benchmarks/cub/build.sh "$work/cub" >"$work/cub_build.log" 2>&1 && touch "$work/cub/ok") &
  cub_build_pid=$!
fi

phase "smoke (a hang here must not eat the run)"
if ! timeout 90 "$python" -c "
import torch, gpuprim
x = torch.randint(-1, 2, (3_000_017,), device='cuda').float()
assert torch.equal(gpuprim.cumsum(x), torch.cumsum(x, 0)), 'cumsum wrong'
v = torch.randint(0, 256, (1_000_003,), device='cuda', dtype=torch.int32)
assert torch.equal(gpuprim.bincount(v, 256), torch.bincount(v, minlength=256)), 'bincount wrong'
torch.cuda.synchronize(); print('smoke ok')
" 2>&1 | tee -a "$summary"; then
  echo "SMOKE FAILED (see above): the tests below will show where" | tee -a "$summary"
fi

phase "exception probe (argument errors raised in libgpuprim reach Python?)"
for mode in fresh after_cuda after_graph; do
  if ! timeout 60 "$python" scripts/exception_probe.py $mode >>"$out/build.log" 2>&1; then
    echo "probe $mode: CRASHED" | tee -a "$summary"
    if [ "$mode" = fresh ] && command -v cuda-gdb >/dev/null; then  # a C++ backtrace of the crash
      timeout 90 cuda-gdb -batch -ex run -ex bt --args "$python" scripts/exception_probe.py fresh 2>&1 \
        | grep -E "^#|signal|SIG" | head -40 | tee -a "$summary"
    fi
  else
    grep "probe $mode" "$out/build.log" | tail -1 | tee -a "$summary"
  fi
done

if [ "${TESTS:-}" = none ]; then
  phase "tests skipped (TESTS=none)"
else
phase "tests${sanitize:+ under compute-sanitizer --tool $sanitize ($(compute-sanitizer --version | tail -1))}"
files=${TESTS:-}
test_seconds=${TEST_TIMEOUT:-330}
if [ -n "${RUN_SECONDS:-}" ]; then  # leave the benchmarks their share and packing its seconds
  bench_share=$([ "${BENCH:-all}" = none ] && echo 0 || echo "${BENCH_TIMEOUT:-300}")
  left=$(( RUN_SECONDS - SECONDS - bench_share - 25 ))
  [ "$left" -lt "$test_seconds" ] && test_seconds=$left
  echo "tests get ${test_seconds}s of RUN_SECONDS=$RUN_SECONDS" | tee -a "$summary"
fi
mkdir -p "$work/test_logs"
( while sleep 20; do tar -czf "$out/test_logs.tar.gz.part" -C "$work" test_logs 2>/dev/null \
    && mv "$out/test_logs.tar.gz.part" "$out/test_logs.tar.gz"; done ) &  # logs survive an outer kill
saver_pid=$!
timeout $(( test_seconds + 60 )) "$python" scripts/run_tests_isolated.py "$work/test_logs" \
  --jobs "${TEST_JOBS:-5}" --chunks "${TEST_CHUNKS:-1}" --timeout "${TEST_FILE_TIMEOUT:-200}" --deadline "$test_seconds" \
  ${files:+--files $files} ${sanitize:+--sanitize $sanitize} -rfE 2>&1 | tee "$out/tests.log"
kill "$saver_pid" 2>/dev/null; wait "$saver_pid" 2>/dev/null; rm -f "$out/test_logs.tar.gz.part"
grep -E "^gpu-runner (tests|sanitizer)" "$out/tests.log" | tee -a "$summary"
# The failure details of each file, for the summary.
grep -h -E "^(FAILED|ERROR) " "$work"/test_logs/*.log 2>/dev/null | head -40 | tee -a "$summary"
if [ -n "$sanitize" ]; then  # the counts per file, then the first errors of every report that has any
  { grep -E "^gpu-runner sanitizer" "$out/tests.log"
    grep -E "^  test_\S+ .* $sanitize: " "$out/tests.log"
    for report in "$work"/test_logs/*."$sanitize".*.log; do
      grep -q -E "ERROR SUMMARY: [1-9]|hazards? displayed \([1-9]" "$report" 2>/dev/null || continue
      echo "---- $(basename "$report")"
      grep -E "^=========" "$report" | head -60
    done; } >"$out/sanitizer_summary.txt" 2>&1
fi
tar -czf "$out/test_logs.tar.gz" -C "$work" test_logs  # now, in case a later phase runs out of time
fi

if [ "${BENCH:-all}" != "none" ]; then
  cub_bin=""
  if [ -z "${COMPARE:-}" ]; then  # a comparison of two trees times gpuprim's rows only
    phase "CUB anchors"
    wait "$cub_build_pid"
    cat "$work/cub_build.log" >>"$out/build.log"
    if [ -f "$work/cub/ok" ]; then cub_bin="$work/cub/cub_anchors"; else echo "CUB harness failed to build (see build.log)" | tee -a "$summary"; fi
  fi
  phase "benchmarks"
  only=${BENCH:-all}
  bench_seconds=${BENCH_TIMEOUT:-300}
  [ -n "${RUN_SECONDS:-}" ] && [ $(( RUN_SECONDS - SECONDS - 20 )) -lt "$bench_seconds" ] \
    && bench_seconds=$(( RUN_SECONDS - SECONDS - 20 ))
  mkdir -p "$work/bench"
  ( while sleep 20; do tar -czf "$out/bench_results.tar.gz.part" -C "$work" bench 2>/dev/null \
      && mv "$out/bench_results.tar.gz.part" "$out/bench_results.tar.gz"; done ) &
  bench_saver_pid=$!
  if [ -n "${COMPARE:-}" ]; then
    timeout "$bench_seconds" "$python" benchmarks/compare_trees.py --before "$COMPARE" --after "$root" \
      --out "$work/bench" --timeout "${BENCH_OP_TIMEOUT:-120}" --rounds "${COMPARE_ROUNDS:-1}" \
      ${cub_bin:+--cub-bin "$cub_bin"} \
      $([ "$only" != all ] && echo "--only $only") 2>&1 | tee "$out/bench.log"
    [ -f "$work/bench/compare.md" ] && cp "$work/bench/compare.md" "$out/compare.md"
  else
    timeout "$bench_seconds" "$python" benchmarks/run_all.py --out "$work/bench" --timeout "${BENCH_OP_TIMEOUT:-120}" ${cub_bin:+--cub-bin "$cub_bin"} \
      ${BENCH_QUICK:+--quick} $([ "$only" != all ] && echo "--only $only") 2>&1 | tee "$out/bench.log"
    [ -f "$work/bench/summary.md" ] && cp "$work/bench/summary.md" "$out/bench_summary.md"
  fi
fi

phase "packing"
[ -n "${bench_saver_pid:-}" ] && { kill "$bench_saver_pid" 2>/dev/null; wait "$bench_saver_pid" 2>/dev/null; rm -f "$out/bench_results.tar.gz.part"; }
[ -d "$work/bench" ] && tar -czf "$out/bench_results.tar.gz" -C "$work" bench
phase "done"
