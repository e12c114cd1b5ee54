#!/usr/bin/env bash
# Installs what is missing, builds with warnings as errors, and runs every
# test with ctest. Set SANITIZE=1 to build and test with ASan + UBSan instead
# (in build-asan/).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
if [[ "${SANITIZE:-0}" == "1" ]]; then
  export BUILD_DIR=build-asan
  scripts/build.sh -DCODEX_WERROR=ON -DCODEX_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
else
  export BUILD_DIR="${BUILD_DIR:-build}"
  scripts/build.sh -DCODEX_WERROR=ON
fi
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "${JOBS:-$(nproc)}" --timeout 600
