#!/usr/bin/env bash
# The project's test command (`npm test`): prepares the test environment, then runs every
# suite under tests/ with Node's test runner, LangGraph's checkpointer validation suite, then the
# server suites again on PostgreSQL.
# Pass file paths to run only those (AGENTCLI_TEST_SERVER_ON_POSTGRES=1 for PostgreSQL).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/test-env.sh
node_bin=node_modules/.bin/node
[ -x "$node_bin" ] || { echo "node_modules is missing: run npm ci first" >&2; exit 1; }
# The chat UI is built ahead of time (npm ci's prepare step), never by the server: rebuild it
# here when ui/ changed since, so the browser tests see the current sources.
if [ ! -f dist/ui/manifest.json ] || [ -n "$(find ui -newer dist/ui/manifest.json -not -path '*/node_modules/*' -print -quit)" ]; then
  "$node_bin" scripts/build-ui.ts
fi
# The formatter's check, the linter (deno fmt, deno lint; settings in deno.json) and the type
# check over the whole tree, before any suite.
if [ "$#" -eq 0 ]; then
  node_modules/.bin/deno fmt --check --quiet || { echo "deno fmt: files above are not formatted; run npx deno fmt" >&2; exit 1; }
  node_modules/.bin/deno lint --quiet || { echo "deno lint found problems (rules: deno.json)" >&2; exit 1; }
  # The type check: the sources and the tests (tsconfig.tests.json; Node runs the tests by
  # stripping types, so only this finds a test calling an API with the wrong shape), then the
  # chat UI (ui/tsconfig.json): under a minute.
  tsc() { "$node_bin" node_modules/typescript/bin/tsc --noEmit -p "$1" || { echo "tsc -p $1: type errors above" >&2; exit 1; }; }
  tsc tsconfig.tests.json
  tsc ui/tsconfig.json
fi
if [ "$#" -gt 0 ]; then files=("$@"); else mapfile -t files < <(find tests -name '*.test.ts' -not -path '*/fixtures/*' | sort); fi
export AGENTCLI_TEST_DATABASE_URL="${AGENTCLI_TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test}"
export AGENTCLI_TEST_REDIS_URL="${AGENTCLI_TEST_REDIS_URL:-redis://127.0.0.1:6379}"
run() { "$node_bin" --test --test-concurrency=1 --test-timeout=600000 "$@"; }
if [ "$#" -gt 0 ]; then run "${files[@]}"; exit; fi
run "${files[@]}"
# LangGraph's checkpointer validation suite on both storage drivers (npm run test:checkpointer).
bash scripts/test-checkpointer.sh
# The server suites once more on the other storage driver: PostgreSQL, a schema per server.
echo "# tests/server again on PostgreSQL (AGENTCLI_TEST_SERVER_ON_POSTGRES=1)"
mapfile -t server_files < <(find tests/server -name '*.test.ts' | sort)
AGENTCLI_TEST_SERVER_ON_POSTGRES=1 run "${server_files[@]}"
