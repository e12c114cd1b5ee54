#!/usr/bin/env bash
# The main job, offline and without an API key: installs what is missing,
# builds, starts the scripted Responses server on a free loopback port, runs
# a real `codex exec` whose model answer calls the shell tool, then
# `codex sessions list` and `codex exec resume --last`, and shows what
# happened, including the stateless requests the server received.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

# Each step says what it does, then how long it took (a first run on a new
# machine spends most of its time installing packages and compiling; README).
demo_start=$SECONDS
step_start=$SECONDS
step_done() {
  echo "   done in $((SECONDS - step_start)) s (demo so far: $((SECONDS - demo_start)) s)"
  step_start=$SECONDS
}

echo "== checking the Debian packages codex needs (scripts/install-deps.sh installs what is missing)"
scripts/install-deps.sh
step_done
echo "== building codex and the scripted server (a first build compiles everything; later ones reuse it)"
BUILD_DIR="${BUILD_DIR:-build}" TARGETS="codex scripted-responses-server" scripts/build.sh
step_done
build="$root/${BUILD_DIR:-build}"
codex="$build/cli/codex"
server="$build/tests/scripted-responses-server"

work=$(mktemp -d /tmp/codex-demo-XXXXXX)
server_pid=""
cleanup() {
  [[ -n "$server_pid" ]] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

mkdir -p "$work/home" "$work/project"
echo "== starting the scripted Responses server"
"$server" --script tests/scripted_server/scripts/demo.json --record "$work/requests.jsonl" \
  --port 0 >"$work/server.out" 2>"$work/server.err" &
server_pid=$!
port=""
for _ in $(seq 1 100); do
  port=$(sed -n '1s/.*:\([0-9][0-9]*\).*/\1/p' "$work/server.out" 2>/dev/null || true)
  [[ -n "$port" ]] && break
  sleep 0.05
done
if [[ -z "$port" ]]; then
  echo "error: the scripted server did not start:" >&2
  cat "$work/server.err" >&2
  exit 1
fi
echo "   listening on 127.0.0.1:$port"
step_done

cat >"$work/home/config.toml" <<TOML
model = "gpt-test"
model_provider = "scripted"

[model_providers.scripted]
name = "scripted Responses server"
base_url = "http://127.0.0.1:$port/v1"
env_key = "SCRIPTED_API_KEY"
wire_api = "responses"
TOML
export CODEX_HOME="$work/home"
export SCRIPTED_API_KEY="demo-key-not-secret"
cd "$work/project"

echo
echo "== the sandbox the shell tool's commands run in here (codex sandbox --explain: the layers in force)"
"$codex" sandbox -s read-only --explain -- true
step_done
echo
echo "== codex exec \"Say hello from the sandbox\""
"$codex" exec "Say hello from the sandbox"
step_done
# The scripted model's answer says the command ran whatever happened; what
# codex sent back to the model says whether it did.
echo "== checking that the shell tool call really ran (its output went back to the model)"
if grep -qE 'hello from the sandbox(\\)+nLinux' "$work/requests.jsonl"; then
  echo "   yes: the function_call_output of request 2 holds the command's two lines, \"hello from the sandbox\" and \"Linux\""
else
  echo "error: the shell tool call's output did not come back (did the sandbox fail?); what the server received:" >&2
  cat "$work/requests.jsonl" >&2
  exit 1
fi
echo
echo "== codex sessions list"
"$codex" sessions list
step_done
echo
echo "== codex exec resume --last \"And now?\""
"$codex" exec resume --last "And now?"
step_done
echo
echo "== what the server received (every request stateless: store:false, full input, no previous_response_id)"
python3 - "$work/requests.jsonl" <<'PY' 2>/dev/null || awk 'END { print NR " requests recorded" }' "$work/requests.jsonl"
import json, sys
for n, line in enumerate(open(sys.argv[1]), 1):
    r = json.loads(line)
    b = r.get("body") or {}
    if not isinstance(b, dict):
        continue
    kinds = [i.get("type") + (":" + i["role"] if i.get("role") else "") for i in b.get("input", [])]
    print(f"  request {n}: {r['path']} store={str(b.get('store')).lower()} "
          f"prompt_cache_key={b.get('prompt_cache_key', '')[:13]}… "
          f"previous_response_id={'previous_response_id' in b} input={len(kinds)} items")
    print("     " + ", ".join(kinds))
PY
echo
echo "demo finished in $((SECONDS - demo_start)) s: the session lives in $CODEX_HOME/sessions.db (removed on exit)"
