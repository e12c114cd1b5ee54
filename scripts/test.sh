#!/usr/bin/env bash
# Installs what is missing, builds with warnings as errors, runs every test
# with ctest, then a short libFuzzer run of each fuzz target (clang, in
# build-fuzz/; FUZZ=0 skips it, CODEX_FUZZ_SECONDS sets its length).
# SANITIZE=1 builds and tests with ASan + UBSan instead (in build-asan/).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs="${JOBS:-$(nproc)}"
if [[ "${SANITIZE:-0}" == "1" ]]; then
  scripts/install-deps.sh
  export BUILD_DIR=build-asan
  BUILD_TYPE=Debug scripts/build.sh -DCODEX_WERROR=ON -DCODEX_SANITIZE=ON -DCODEX_BUILD_BENCH=OFF
  scripts/install-mcp-test-servers.sh "$BUILD_DIR"
  ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$jobs" --timeout 900
  exit 0
fi

if [[ "${FUZZ:-1}" == "1" ]]; then scripts/install-deps.sh --fuzz; else scripts/install-deps.sh; fi
export BUILD_DIR="${BUILD_DIR:-build}"
scripts/build.sh -DCODEX_WERROR=ON
scripts/install-mcp-test-servers.sh "$BUILD_DIR"  # npm MCP servers for mcp_e2e_test
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$jobs" --timeout 600

if [[ "${FUZZ:-1}" == "1" ]]; then
  echo "== fuzz smoke runs (${CODEX_FUZZ_SECONDS:-10} s per target)"
  CXX=clang++-14 cmake -S . -B build-fuzz -G Ninja -DCODEX_FUZZ=ON -DCODEX_BUILD_TESTS=OFF \
    -DCODEX_BUILD_BENCH=OFF \
    -DCODEX_FUZZ_SECONDS="${CODEX_FUZZ_SECONDS:-10}" >/dev/null
  targets=$(sed -n 's/^ *codex_add_fuzzer(\([a-z_]*\).*/\1/p' fuzz/CMakeLists.txt | tr '\n' ' ')
  ninja -C build-fuzz -j "$jobs" $targets
  ctest --test-dir build-fuzz -R '^fuzz_' --output-on-failure
fi
