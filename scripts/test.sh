#!/bin/sh
# test.sh: build exactref and run the whole test suite, then again under ASan and UBSan.
# Environment: EXACTREF_SEED (random tests' seed), JOBS (parallel jobs, default: all cores),
# FUZZ_SECONDS (how long the .npy reader is fuzzed, default 60).
set -eu
cd "$(dirname "$0")/.."
jobs=${JOBS:-$(nproc)}
# The OpenCL tests must run here (PoCL is installed by setup-debian.sh), not skip.
export EXACTREF_REQUIRE_OPENCL=1

echo "== build (RelWithDebInfo) and test"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build -j "$jobs"
(cd build && ctest --output-on-failure -j "$jobs")

echo "== build with AddressSanitizer and UndefinedBehaviorSanitizer, and test again"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DER_SANITIZE=ON -DER_BUILD_BENCH=OFF -DER_ENABLE_CUDA=OFF
cmake --build build-asan -j "$jobs"
(cd build-asan && ctest --output-on-failure -j "$jobs")

echo "== fuzz the .npy reader (libFuzzer, ${FUZZ_SECONDS:-60} s)"
sh scripts/fuzz.sh build
