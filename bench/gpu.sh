#!/usr/bin/env bash
# bench/gpu.sh: build exactref with CUDA, run the CUDA tests, and benchmark exactref against cuBLAS.
#
#   bench/gpu.sh [BUILD_DIR]        (default: build-gpu in the source tree; JOBS=n: build jobs)
#
# 1. cmake with CUDA on (-DCMAKE_CUDA_ARCHITECTURES=90, Release), building only what is needed;
# 2. the device check (bench_gpu --n 0): no device -> "gpu.sh: no CUDA device: ..." and exit 3;
# 3. ctest -R cuda with EXACTREF_REQUIRE_CUDA=1 (a skipped device test is a failure here);
# 4. bench_gpu: 8192 x 8192 x 8192, bf16 and f8E4M3FN inputs, f32 output: cuBLASLt vs exactref's
#    reference (the exact CUDA kernel), tolerance and covers; the table is printed last.
# The whole script is meant to finish in under 5 minutes on an H200: the exact kernel runs at full size
# only when its extrapolation from a block fits ER_BENCH_BUDGET_S (default here: what is left of 240 s
# after the build and the tests, at most 90 s); otherwise the table says EXTRAPOLATED.
set -euo pipefail

src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$src/build-gpu}
jobs=${JOBS:-$(nproc 2>/dev/null || echo 4)}
start=$(date +%s)
elapsed() { echo $(( $(date +%s) - start )); }

echo "== gpu.sh: configure and build in $build ($jobs jobs)"
mkdir -p "$build"
cmake -S "$src" -B "$build" -DER_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release \
  -DER_BENCH_PEERS=OFF >"$build/gpu-configure.log" 2>&1 || { cat "$build/gpu-configure.log"; exit 1; }
cmake --build "$build" -j"$jobs" --target exactref_cuda_backend exactref_cli bench_gpu test_cuda_loader \
  test_cuda_host_convert test_cuda_convert test_cuda_mma_host test_cuda_mma
echo "== gpu.sh: built in $(elapsed) s"

# A device?  bench_gpu --n 0 stops after the device check (exit 3 and the reason without one).
set +e
probe=$("$build/bench_gpu" --n 0 2>&1)
rc=$?
set -e
if [ $rc -eq 3 ]; then
  echo "gpu.sh: ${probe#bench_gpu: }" >&2
  exit 3
elif [ $rc -ne 0 ]; then
  echo "$probe" >&2
  exit $rc
fi
echo "$probe" | head -1

echo "== gpu.sh: CUDA tests"
(cd "$build" && EXACTREF_REQUIRE_CUDA=1 ctest -R cuda --output-on-failure)
echo "== gpu.sh: tests done at $(elapsed) s"

left=$(( 240 - $(elapsed) ))
[ $left -gt 90 ] && left=90
[ $left -lt 5 ] && left=5
echo "== gpu.sh: benchmark (full-size exact kernel only if extrapolated under ${left} s)"
ER_BENCH_BUDGET_S=${ER_BENCH_BUDGET_S:-$left} "$build/bench_gpu" --n "${ER_BENCH_N:-8192}" --block "${ER_BENCH_BLOCK:-1024}"
echo "== gpu.sh: done in $(elapsed) s"
