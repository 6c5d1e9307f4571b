#!/usr/bin/env bash
# Two runs of scripts/gpu_runner.sh side by side in one device call, so that a build on the device does not
# idle the GPU:
#  A (a copy, the library prebuilt here): tests, then benchmarks;
#  B (this tree): a build on the device of the ops the AOTInductor models use (GPUPRIM_OPS), then the
#  AOTInductor test (it needs the CMake build tree).
# Everything ends inside LIMIT seconds and is packed into OUT as at most 4 files (summary_a.txt, summary_b.txt,
# all.tar.gz with both runners' outputs).
#
#   PREBUILT_A=.device/b/libgpuprim.so.xz TESTS_A="tests/test_x.py ..." BENCH_A="op,op" \
#   TESTS_B=tests/test_aoti.py LIMIT=550 bash scripts/gpu_runner_pair.sh OUT
#
# Wheels in .whl/ (e.g. expecttest for tests/test_torch_samples.py) are installed into /tmp/site first.
# OPS_B (GPUPRIM_OPS of B's build) defaults to the ops of the AOTInductor models; JOBS_A, BUILD_JOBS_B,
# TESTS_SECONDS_A, BENCH_SECONDS_A and BENCH_OP_SECONDS tune the split.
set -u
out=${1:?usage: gpu_runner_pair.sh OUT}
limit=${LIMIT:-555}
root=$(pwd)
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=/tmp/site
fi
mkdir -p "$out/a" "$out/b"
rm -rf /tmp/treeA && mkdir /tmp/treeA && tar -C "$root" --exclude=./build -cf - . | tar -C /tmp/treeA -xf -
(cd /tmp/treeA && PREBUILT=${PREBUILT_A:?PREBUILT_A=FILE.so.xz (a library built elsewhere for this torch)} RUN_SECONDS=$((limit - 25)) TEST_JOBS=${JOBS_A:-5} \
  TEST_TIMEOUT=${TESTS_SECONDS_A:-290} TEST_FILE_TIMEOUT=${TESTS_SECONDS_A:-290} BENCH_TIMEOUT=${BENCH_SECONDS_A:-200} \
  BENCH_OP_TIMEOUT=${BENCH_OP_SECONDS:-90} TESTS="$TESTS_A" BENCH="$BENCH_A" \
  timeout $((limit - 15)) bash scripts/gpu_runner.sh "$out/a" >"$out/a/runner.log" 2>&1) &
pid_a=$!
# The HF drop-in example while A's tests run (its outputs and gradients count; its times share the GPU).
(sleep 20; cd /tmp/treeA && PYTHONPATH="/tmp/treeA/torch_ops${PYTHONPATH:+:$PYTHONPATH}" timeout 150 \
  python3 examples/hf_moe_drop_in.py --device cuda --dtype bfloat16 >"$out/a/hf.log" 2>&1; echo "rc=$?" >>"$out/a/hf.log") &
(GPUPRIM_OPS=${OPS_B:-moe_route,moe_permute,moe_unpermute,topk_gating,embedding_bag,topk,cumsum} \
  MAX_JOBS=${BUILD_JOBS_B:-12} RUN_SECONDS=$((limit - 25)) TEST_JOBS=1 TEST_TIMEOUT=400 TEST_FILE_TIMEOUT=400 \
  TESTS="$TESTS_B" BENCH=none timeout $((limit - 15)) bash scripts/gpu_runner.sh "$out/b" >"$out/b/runner.log" 2>&1) &
pid_b=$!
wait $pid_a $pid_b
cp "$out/a/summary.txt" "$out/summary_a.txt" 2>/dev/null
cp "$out/b/summary.txt" "$out/summary_b.txt" 2>/dev/null
tar -czf "$out/all.tar.gz" -C "$out" a b && rm -rf "$out/a" "$out/b"
ls -la "$out"
