#!/bin/sh
# test.sh: build exactref and run the whole test suite, then again under ASan and UBSan.
# Environment: EXACTREF_SEED (random tests' seed), JOBS (parallel jobs, default: all cores),
# FUZZ_SECONDS (how long the .npy reader is fuzzed, default 60), FUZZ_INTERP_SECONDS (the Tile IR
# parser, default 30).  The Python package is tested in
# build/venv (numpy, ml_dtypes, pytest, scikit-build-core and dask[distributed] from PyPI).
set -eu
cd "$(dirname "$0")/.."
jobs=${JOBS:-$(nproc)}
# The OpenCL tests must run here (PoCL is installed by setup-debian.sh), not skip.
export EXACTREF_REQUIRE_OPENCL=1

echo "== build (RelWithDebInfo) and test"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build -j "$jobs"
(cd build && ctest --output-on-failure -j "$jobs")

echo "== the Python package: pip install . into a virtual environment in the build tree, then pytest"
python3 -m venv build/venv
build/venv/bin/python -m pip install -q numpy ml_dtypes pytest scikit-build-core "dask[distributed]"
# (CUDA off here: the build above already compiled the CUDA module, and these tests run on the CPU)
CMAKE_BUILD_PARALLEL_LEVEL="$jobs" build/venv/bin/python -m pip install -q --no-build-isolation --no-deps --force-reinstall \
    -C cmake.define.ER_ENABLE_CUDA=OFF .
# no cache or bytecode written into the source tree; exit 5 (no tests collected) fails the run too
rc=0
PYTHONDONTWRITEBYTECODE=1 build/venv/bin/python -m pytest -q -p no:cacheprovider tests/python || rc=$?
if [ "$rc" -eq 5 ]; then echo "test.sh: pytest collected no tests"; exit 1; fi
if [ "$rc" -ne 0 ]; then echo "test.sh: pytest failed (exit $rc)"; exit 1; fi

echo "== build with AddressSanitizer and UndefinedBehaviorSanitizer, and test again"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DER_SANITIZE=ON -DER_BUILD_BENCH=OFF -DER_ENABLE_CUDA=OFF
cmake --build build-asan -j "$jobs"
# The reruns that only select another path of the same code by environment (the fallback kernel, AVX2
# where AVX-512 is present, the row-at-a-time paths) run in the build above; here they are left out to
# keep the suite within its time (on a machine without AVX-512 the AVX2 paths are the primary ones).
# test_backends too: its time is PoCL running the OpenCL kernels (which the sanitizers do not see) for
# the bit-for-bit comparison done above; the OpenCL host code still runs here under test_golden_hashes
# and tests/opencl.
(cd build-asan && ctest --output-on-failure -j "$jobs" -E '^(test_backends|test_bounds_builtin|test_covers_fast_no_avx512|engine_.*_paths|engine_.*_avx2)$')

echo "== fuzz the .npy reader (libFuzzer, ${FUZZ_SECONDS:-60} s) and the Tile IR parser (${FUZZ_INTERP_SECONDS:-30} s)"
sh scripts/fuzz.sh build
