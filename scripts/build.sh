#!/usr/bin/env bash
# Configures and builds codex into build/ (or $BUILD_DIR). Extra arguments go
# to cmake's configure step, e.g. -DCODEX_SANITIZE=ON. TARGETS="a b" builds
# only those targets (and what they need) instead of everything.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${BUILD_DIR:-build}"
# ccache caches compiles that use a precompiled header (Debug builds,
# cmake/BuildSpeed.cmake) only with this sloppiness; CMake adds it to its
# ccache launcher too, this covers a ccache reached through CXX or PATH.
export CCACHE_SLOPPINESS="${CCACHE_SLOPPINESS:-pch_defines,time_macros}"
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}" "$@" >/dev/null
# shellcheck disable=SC2086 # TARGETS is a space-separated list
ninja -C "$build_dir" -j "${JOBS:-$(nproc)}" ${TARGETS:-}
