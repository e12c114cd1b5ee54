#!/usr/bin/env bash
# Installs what is missing, builds with warnings as errors, runs every test
# with ctest, then a short libFuzzer run of each fuzz target (clang, in
# build-fuzz/; FUZZ=0 skips it, CODEX_FUZZ_SECONDS sets its length).
# SANITIZE=1 builds and tests with ASan + UBSan instead (in build-asan/).
# CODEX_DEBUG_INFO=0|1|2 sets the debug info of the build (default: the build
# type's -g; line tables only under SANITIZE=1, enough for its stack traces).
# CTEST_JOBS sets how many tests run at once (default: two per core).
# Each step prints its wall time and the CPU time used so far (docs/ci.md).
# A test that cannot run here skips with a printed reason (listed after
# ctest); under CI=true such a skip fails the run (testing/skip.h).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs="${JOBS:-$(nproc)}"
# Tests mostly wait (for codex processes, servers, a lease going stale): at one
# test per core CI's ctest used about half the CPU (docs/ci.md), so two per core.
ctest_jobs="${CTEST_JOBS:-$((2 * jobs))}"

step_start=$SECONDS
times_file=$(mktemp)
trap 'rm -f "$times_file"' EXIT
step_done() {  # `times` must run in this shell: its second line is the CPU of our children
  times >"$times_file"
  local cpu
  cpu=$(tail -n 1 "$times_file")
  echo "== timing: $1: $((SECONDS - step_start)) s wall; CPU so far: ${cpu/ / user, } sys"
  step_start=$SECONDS
}
# ctest shows a skipped test's output nowhere, so this lists every skip's
# reason (the "SKIP" lines of testing/skip.h) by test. Under CI=true a skip
# fails its test instead (testing/skip.cc), so then there are none.
print_skips() {
  local log="$1/Testing/Temporary/LastTest.log"
  [[ -f "$log" ]] || return 0
  awk '/^[0-9]+\/[0-9]+ Test: / { test = $3 } /^SKIP/ { print "   " test ": " $0 }' "$log" >"$times_file.skips"
  if [[ -s "$times_file.skips" ]]; then
    echo "== skipped here (what this machine lacks; CI=true would fail them):"
    cat "$times_file.skips"
  fi
  rm -f "$times_file.skips"
}

if [[ "${SANITIZE:-0}" == "1" ]]; then
  scripts/install-deps.sh --tests
  export BUILD_DIR=build-asan
  BUILD_TYPE=Debug scripts/build.sh -DCODEX_WERROR=ON -DCODEX_SANITIZE=ON -DCODEX_BUILD_BENCH=OFF \
    -DCODEX_DEBUG_INFO="${CODEX_DEBUG_INFO:-1}"
  step_done "ASan+UBSan build"
  scripts/install-mcp-test-servers.sh "$BUILD_DIR"
  ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$ctest_jobs" --timeout 900
  print_skips "$BUILD_DIR"
  step_done "ASan+UBSan ctest"
  exit 0
fi

if [[ "${FUZZ:-1}" == "1" ]]; then scripts/install-deps.sh --tests --fuzz; else scripts/install-deps.sh --tests; fi
export BUILD_DIR="${BUILD_DIR:-build}"
scripts/build.sh -DCODEX_WERROR=ON -DCODEX_DEBUG_INFO="${CODEX_DEBUG_INFO:-}"
step_done "build"
scripts/install-mcp-test-servers.sh "$BUILD_DIR"  # npm MCP servers for mcp_e2e_test

# The fuzz build (clang, build-fuzz/) runs beside the tests at a low priority:
# the tests mostly wait, so it takes CPU time they leave unused (docs/ci.md).
fuzz_pid=""
if [[ "${FUZZ:-1}" == "1" ]]; then
  CXX=clang++-14 cmake -S . -B build-fuzz -G Ninja -DCODEX_FUZZ=ON -DCODEX_BUILD_TESTS=OFF \
    -DCODEX_BUILD_BENCH=OFF \
    -DCODEX_FUZZ_SECONDS="${CODEX_FUZZ_SECONDS:-10}" >/dev/null
  targets=$(sed -n 's/^ *codex_add_fuzzer(\([a-z_]*\).*/\1/p' fuzz/CMakeLists.txt | tr '\n' ' ')
  # shellcheck disable=SC2086 # a space-separated list
  nice -n 10 ninja -C build-fuzz -j "$jobs" $targets >build-fuzz/build.log 2>&1 &
  fuzz_pid=$!
  trap 'rm -f "$times_file"; if [[ -n "$fuzz_pid" ]]; then kill "$fuzz_pid" 2>/dev/null || true; fi' EXIT
fi
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$ctest_jobs" --timeout 600
print_skips "$BUILD_DIR"
step_done "ctest (the fuzz build beside it)"

if [[ -n "$fuzz_pid" ]]; then
  if ! wait "$fuzz_pid"; then
    fuzz_pid=""
    cat build-fuzz/build.log
    echo "error: the fuzz build failed (build-fuzz/build.log above)" >&2
    exit 1
  fi
  fuzz_pid=""
  step_done "fuzz build (its rest after the tests)"
  echo "== fuzz smoke runs (${CODEX_FUZZ_SECONDS:-10} s per target)"
  ctest --test-dir build-fuzz -R '^fuzz_' --output-on-failure -j "$jobs"
  step_done "fuzz smoke runs"
fi
