#!/usr/bin/env bash
# Smoke test of `agentcli dev` as a user meets it on a fresh machine: the given executable
# (or command) with an empty environment, no model keys: it must start, serve /ok, the
# Agent API and the UI, and a run must fail with an error naming the variable to set.
# Usage: scripts/smoke-dev.sh <agentcli executable> <agent.toml>
set -euo pipefail
exe="$1"; config="$2"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
work=$(mktemp -d)
cp -r "$(dirname "$config")/." "$work/"
rm -rf "$work/.agentcli" "$work/.env"
log="$work/dev.log"
(cd "$work" && exec env -i HOME="$work" "$exe" dev --port "$port" >"$log" 2>&1) &
pid=$!
cleanup() { kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
base="http://127.0.0.1:$port"
for _ in $(seq 1 120); do curl -fsS "$base/ok" >/dev/null 2>&1 && break; sleep 0.5; done
curl -fsS "$base/ok" >/dev/null || { echo "smoke-dev: /ok never answered"; cat "$log"; exit 1; }
# The early listener answers /ok while the project still loads: the warning may come just after.
for _ in $(seq 1 120); do grep -q "OPENAI_API_KEY" "$log" && break; sleep 0.5; done
grep -q "OPENAI_API_KEY" "$log" || { echo "smoke-dev: dev did not warn about missing credentials"; cat "$log"; exit 1; }
curl -fsS -X POST "$base/assistants/search" -H 'content-type: application/json' -d '{}' | grep -q '"graph_id"' || { echo "smoke-dev: /assistants/search failed"; exit 1; }
curl -fsS "$base/app/" | grep -qi "<html" || { echo "smoke-dev: /app did not serve the UI"; exit 1; }
out=$(curl -sS -X POST "$base/runs/wait" -H 'content-type: application/json' -d '{"assistant_id":"agent","input":{"messages":[{"role":"user","content":"hi"}]}}')
echo "$out" | grep -q "OPENAI_API_KEY" || { echo "smoke-dev: a run without credentials did not name the variable: $out"; cat "$log"; exit 1; }
echo "smoke-dev: ok ($exe)"
