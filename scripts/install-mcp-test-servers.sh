#!/usr/bin/env bash
# Installs the npm packages the end-to-end tests run, at pinned versions:
#  - the third-party MCP servers (tests/mcp_npm_e2e_test.cc) into <build dir>/mcp-servers;
#  - OpenAI's TypeScript SDK (tests/sdk_e2e_test.cc drives our codex with it)
#    into <build dir>/codex-compat/sdk, without its own codex binary;
#  - the real Codex CLI 0.169.0 (tests/codex_compat_test.cc compares its
#    --help tree with ours) into <build dir>/codex-compat/codex.
# Without Node/npm or the network it says so and exits 0: those tests then
# skip with a printed reason (under CI=true they fail instead).
# Usage: scripts/install-mcp-test-servers.sh [BUILD_DIR]   (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${1:-${BUILD_DIR:-build}}"
dest="$build_dir/mcp-servers"
# They must run on Debian 12's own Node.js (18.20), the one install-deps.sh
# gives a new machine. From 1.25.0 on, @modelcontextprotocol/sdk's streamable
# HTTP server calls the global `crypto.randomUUID()`, which Node 18 has only
# behind --experimental-global-webcrypto (a global `crypto` came with Node 19,
# although the SDK says node >= 18): without it every POST answers HTTP 400
# "ReferenceError: crypto is not defined". The version is the one the Codex
# 0.169 captures in tests/compat/ were made against (tool names, resources,
# instructions), so it is not pinned back; mcp_npm_e2e_test starts the HTTP
# server with that flag when `node` is 18.
packages=(
  "@modelcontextprotocol/server-everything@2026.8.31"
  "@modelcontextprotocol/server-filesystem@2026.8.31"
)
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "note: node/npm not found; the MCP end-to-end tests against npm servers will skip" >&2
  exit 0
fi
# install_set DEST NPM_FLAGS PACKAGE...: npm install into DEST unless its stamp
# already names the same packages.
install_set() {
  local dest="$1" flags="$2"
  shift 2
  local want="$*"
  local stamp="$dest/.installed"
  if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
    return 0
  fi
  mkdir -p "$dest"
  echo "installing test packages into $dest: $want" >&2
  # shellcheck disable=SC2086  # flags is a list of words
  if npm install --prefix "$dest" --no-audit --no-fund --loglevel=error $flags "$@" >&2; then
    printf '%s' "$want" >"$stamp"
  else
    echo "note: npm install into $dest failed; the tests that need it will skip" >&2
  fi
}
# The SDK depends on a codex binary package of its own; the test points it at
# ours (codexPathOverride), so that optional platform binary is not installed.
install_set "$build_dir/codex-compat/sdk" "--omit=optional" "@openai/codex-sdk@0.163.0"
install_set "$build_dir/codex-compat/codex" "" "@openai/codex@0.169.0"
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
