#!/usr/bin/env bash
# Installs the Debian 12 packages codex needs to build it (and run the demo),
# when missing; --tests adds what the tests run (a PostgreSQL server, tmux,
# Chromium, Node.js), --fuzz clang + libFuzzer. The demo installs the first
# set only (on a new machine the test set is most of the download).
# Usage: scripts/install-deps.sh [--tests] [--fuzz]
set -euo pipefail
tests=0
fuzz=0
for arg in "$@"; do
  case "$arg" in
    --tests) tests=1 ;;
    --fuzz) fuzz=1 ;;
    *)
      echo "error: unknown argument '$arg'; usage: scripts/install-deps.sh [--tests] [--fuzz]" >&2
      exit 2
      ;;
  esac
done

packages=(cmake ninja-build g++ pkg-config git openssl ca-certificates
  libsqlite3-dev libsqlitecpp-dev libcpp-httplib-dev libssl-dev zlib1g-dev libbrotli-dev
  nlohmann-json3-dev catch2 libtomlplusplus-dev libcli11-dev libseccomp-dev
  bubblewrap libmd4c-dev libmd4c-html0  # libmd4c-dev's CMake config names libmd4c-html.so, which it does not depend on
  libpq-dev)  # libpq: the PostgreSQL store (its header at build time; codex loads libpq5 on demand, storage/libpq.h)
# The interactive UI's code blocks are coloured by GNU Source-highlight (a
# maintained library with grammars for ~150 languages and ANSI output, rather
# than keyword lists of our own); utf8proc gives Unicode widths, grapheme
# clusters and the classes line breaking needs, from the Unicode tables.
packages+=(libsource-highlight-dev libutf8proc-dev)
# utf8proc also serves search: it folds case and accents of every script by
# Unicode's own decomposition and case folding (storage/fts_tokenizer.cc).
if ((tests)); then
  # postgresql: the PostgreSQL store's tests start a private server (initdb).
  # tmux: tests/interactive_e2e_test.cc resizes the interactive UI in a
  # terminal that re-wraps its lines.
  # chromium: tests/viewer_e2e_test.cc drives the session viewer's page
  # headless (it skips without it, and fails under CI=true).
  packages+=(postgresql tmux chromium)
  # Node.js + npm run the third-party MCP servers and the TypeScript SDK of
  # the e2e tests (scripts/install-mcp-test-servers.sh); a node installed
  # otherwise is kept.
  if ! command -v node >/dev/null; then packages+=(nodejs); fi
  if ! command -v npm >/dev/null; then packages+=(npm); fi
fi
if ((fuzz)); then
  packages+=(clang-14 libclang-rt-14-dev)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if ((${#missing[@]} == 0)); then
  exit 0
fi

echo "installing: ${missing[*]}" >&2
sudo=""
if [[ $(id -u) -ne 0 ]]; then
  if ! command -v sudo >/dev/null; then
    echo "error: missing packages (${missing[*]}) and not root; install them or run as root" >&2
    exit 1
  fi
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
