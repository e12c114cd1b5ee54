#!/usr/bin/env bash
# Installs the third-party MCP servers the end-to-end tests run
# (tests/mcp_e2e_test.cc) into <build dir>/mcp-servers, at pinned versions,
# with npm. Without Node/npm or the network it says so and exits 0: those tests
# then skip with a printed reason.
# Usage: scripts/install-mcp-test-servers.sh [BUILD_DIR]   (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${1:-${BUILD_DIR:-build}}"
dest="$build_dir/mcp-servers"
packages=(
  "@modelcontextprotocol/server-everything@2026.8.31"
  "@modelcontextprotocol/server-filesystem@2026.8.31"
)
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "note: node/npm not found; the MCP end-to-end tests against npm servers will skip" >&2
  exit 0
fi
stamp="$dest/.installed"
want="${packages[*]}"
if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
  exit 0
fi
mkdir -p "$dest"
echo "installing MCP test servers into $dest: $want" >&2
if npm install --prefix "$dest" --no-audit --no-fund --loglevel=error "${packages[@]}" >&2; then
  printf '%s' "$want" >"$stamp"
else
  echo "note: npm install failed; the MCP end-to-end tests against npm servers will skip" >&2
fi
