#!/usr/bin/env bash
# Configures and builds codex into build/ (or $BUILD_DIR). Extra arguments go
# to cmake's configure step, e.g. -DCODEX_SANITIZE=ON.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${BUILD_DIR:-build}"
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}" "$@" >/dev/null
ninja -C "$build_dir" -j "${JOBS:-$(nproc)}"
