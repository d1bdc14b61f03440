#!/usr/bin/env bash
# bench/gpu.sh: build exactref with CUDA, run the CUDA tests, and benchmark exactref against cuBLAS.
#
#   bench/gpu.sh [BUILD_DIR]             (default: build-gpu in the source tree; JOBS=n: build jobs)
#   bench/gpu.sh --dry-run [BUILD_DIR]   (default: build): no device, nothing configured or built
#
# --dry-run runs end to end anywhere (ctest runs it: bench_gpu_dry_run): it prints the steps a device
# run takes, then from an existing build runs bench_slices (the host emulation of the CUDA module's
# integer slices against er_mma, bit for bit, at n = ER_DRY_N, default 96) and, where the build has
# CUDA, bench_gpu --dry-run (the module's host pass, cuBLAS replaced by the CPU engine) at n =
# ER_DRY_GPU_N (default 64), its table in a temporary directory that is removed afterwards.  Exit 0
# when every step it ran passed (no FAILED or DIFFER row), 1 otherwise.
#
# 1. cmake with CUDA on (-DCMAKE_CUDA_ARCHITECTURES=90, Release), building only what is needed (the
#    tests too when the Check and MPFR libraries are there; without them the tests are skipped, said so);
# 2. the device check (bench_gpu --n 0): no device -> "gpu.sh: no CUDA device: ..." and exit 3;
# 3. ctest -R 'cuda|^test_backends$' with EXACTREF_REQUIRE_CUDA=1 (a skipped device test is a failure here), under a time
#    limit; a failure is reported and the benchmark still runs (the exit status says so at the end);
# 4. bench_gpu: 8192 x 8192 x 8192, bf16 and f8E4M3FN inputs, f32 output: cuBLASLt against exactref's
#    reference, tolerance and covers through the library (er_result_create / er_result_bounds /
#    er_result_covers on ER_BACKEND_CUDA), the whole check's ratio to cuBLAS's fp8 GEMM; the table is
#    printed last.
# The whole script is meant to finish in under 5 minutes (TOTAL_S, default 285 s): bench_gpu measures a
# block first and runs a full-size step only when its extrapolation fits what is left of its budget
# (otherwise the row says EXTRAPOLATED), and it runs under `timeout`: if it is cut short, the table as
# far as it got is printed from the file bench_gpu rewrites after every row.
# Environment: JOBS, TOTAL_S, ER_BENCH_N (8192), ER_BENCH_BLOCK (1024), ER_BENCH_TOL_BLOCK (256).
set -euo pipefail

src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dry=0
if [ "${1:-}" = "--dry-run" ]; then
  dry=1
  shift
fi
if [ $dry -eq 1 ]; then build=${1:-$src/build}; else build=${1:-$src/build-gpu}; fi
jobs=${JOBS:-$(nproc || echo 4)}
total=${TOTAL_S:-285}
start=$(date +%s)
elapsed() { echo $(( $(date +%s) - start )); }
status=0
have_timeout=0
[ -n "$(command -v timeout 2>&1 || true)" ] && have_timeout=1

common=(-DER_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release -DER_BENCH_PEERS=OFF)
targets=(exactref_cuda_backend exactref_cli bench_gpu bench_slices)
test_targets=(test_cuda_loader test_cuda_host_convert test_cuda_convert test_backends test_cuda_slices_host
              test_cuda_slices)

if [ $dry -eq 1 ]; then
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpu-dry.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  echo "== gpu.sh --dry-run: no device; nothing configured or built.  A device run would do:"
  echo "   cmake -S $src -B <build-gpu> ${common[*]} -DER_BUILD_TESTS=ON"
  echo "   cmake --build <build-gpu> -j$jobs --target ${targets[*]} ${test_targets[*]}"
  echo "   <build-gpu>/bench_gpu --n 0                       (the device check; exit 3 without one)"
  echo "   EXACTREF_REQUIRE_CUDA=1 ctest -R cuda -j4         (within $(( total / 3 )) s)"
  echo "   <build-gpu>/bench_gpu --n ${ER_BENCH_N:-8192} --block ${ER_BENCH_BLOCK:-1024} --tol-block ${ER_BENCH_TOL_BLOCK:-256} --table <build-gpu>/bench_gpu_table.md"
  if [ ! -x "$build/bench_slices" ]; then
    echo "gpu.sh --dry-run: $build/bench_slices is not built (cmake --build $build --target bench_slices)" >&2
    exit 1
  fi
  echo "== gpu.sh --dry-run: the host emulation of the integer slices against er_mma"
  "$build/bench_slices" --n "${ER_DRY_N:-96}" || status=1
  if [ -x "$build/bench_gpu" ]; then
    echo "== gpu.sh --dry-run: bench_gpu --dry-run (the module's host pass; cuBLAS replaced by the CPU engine)"
    "$build/bench_gpu" --dry-run --n "${ER_DRY_GPU_N:-64}" --block 32 --tol-block 16 --table "$tmp/table.md" || status=1
    if grep -E -q "FAILED|DIFFER" "$tmp/table.md"; then
      echo "gpu.sh --dry-run: a row of bench_gpu's table FAILED or DIFFERS" >&2
      status=1
    fi
  else
    echo "== gpu.sh --dry-run: this build has no CUDA backend (no $build/bench_gpu): bench_gpu NOT RUN"
  fi
  echo "== gpu.sh --dry-run: done in $(elapsed) s, status $status"
  exit $status
fi

echo "== gpu.sh: configure and build in $build ($jobs jobs)"
mkdir -p "$build"
tests=1
if ! cmake -S "$src" -B "$build" "${common[@]}" -DER_BUILD_TESTS=ON >"$build/gpu-configure.log" 2>&1; then
  echo "gpu.sh: configuring with the tests failed (the Check or MPFR library missing?); last lines:" >&2
  tail -5 "$build/gpu-configure.log" >&2 || true
  echo "gpu.sh: configuring again without the tests (they are skipped: NOT TESTED)" >&2
  tests=0
  if ! cmake -S "$src" -B "$build" "${common[@]}" -DER_BUILD_TESTS=OFF >"$build/gpu-configure.log" 2>&1; then
    cat "$build/gpu-configure.log" >&2
    echo "gpu.sh: configure failed" >&2
    exit 1
  fi
fi
if [ $tests -eq 1 ]; then
  targets+=("${test_targets[@]}")
fi
if ! cmake --build "$build" -j"$jobs" --target "${targets[@]}" >"$build/gpu-build.log" 2>&1; then
  grep -E "error|Error" "$build/gpu-build.log" | head -40 >&2 || true
  tail -20 "$build/gpu-build.log" >&2
  echo "gpu.sh: build failed (log: $build/gpu-build.log)" >&2
  exit 1
fi
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

test_note="not run"
if [ $tests -eq 1 ]; then
  echo "== gpu.sh: CUDA tests (EXACTREF_REQUIRE_CUDA=1)"
  limit=$(( total / 3 ))
  set +e
  if [ $have_timeout -eq 1 ]; then
    (cd "$build" && EXACTREF_REQUIRE_CUDA=1 timeout -k 5 $limit ctest -R 'cuda|^test_backends$' -j4 --output-on-failure)
  else
    (cd "$build" && EXACTREF_REQUIRE_CUDA=1 ctest -R 'cuda|^test_backends$' -j4 --output-on-failure)
  fi
  rc=$?
  set -e
  if [ $rc -eq 0 ]; then
    test_note="passed"
  elif [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    test_note="CUT SHORT after $limit s (timeout)"
    status=1
  else
    test_note="FAILED (ctest exit $rc; see above)"
    status=1
  fi
  echo "== gpu.sh: tests $test_note at $(elapsed) s"
else
  test_note="NOT BUILT (configure without the tests)"
fi

left=$(( total - $(elapsed) - 10 ))
[ $left -lt 30 ] && left=30
budget=$(( left - 15 ))
table="$build/bench_gpu_table.md"
rm -f "$table"
echo "== gpu.sh: benchmark (${left} s at most; full-size steps only if extrapolated within ${budget} s)"
set +e
if [ $have_timeout -eq 1 ]; then
  ER_BENCH_BUDGET_S=$budget timeout -k 10 $left "$build/bench_gpu" --n "${ER_BENCH_N:-8192}" \
    --block "${ER_BENCH_BLOCK:-1024}" --tol-block "${ER_BENCH_TOL_BLOCK:-256}" --table "$table"
else
  ER_BENCH_BUDGET_S=$budget "$build/bench_gpu" --n "${ER_BENCH_N:-8192}" --block "${ER_BENCH_BLOCK:-1024}" \
    --tol-block "${ER_BENCH_TOL_BLOCK:-256}" --table "$table"
fi
rc=$?
set -e
if [ $rc -ne 0 ]; then
  status=1
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    echo "gpu.sh: bench_gpu was cut short after $left s (timeout); the table as far as it got:" >&2
  else
    echo "gpu.sh: bench_gpu exited with status $rc; the table as far as it got:" >&2
  fi
  if [ -f "$table" ]; then cat "$table"; else echo "(no row was written)"; fi
fi
echo "== gpu.sh: CUDA tests: $test_note"
echo "== gpu.sh: done in $(elapsed) s"
exit $status
