#!/usr/bin/env bash
# The side-by-side compatibility suite (tests/compat, also part of `npm test`): against our
# server, or with --peer against LangGraph's own server, `@langchain/langgraph-cli dev`
# (offline: LANGGRAPH_CLI_NO_ANALYTICS=1, BROWSER=none; a langgraph.json in a temp dir points
# at the same graph files). Usage: npm run test:compat [-- --peer]
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--peer" ]; then export AGENTCLI_COMPAT_PEER=1; shift; fi
mapfile -t files < <(find tests/compat -name '*.test.ts' | sort)
exec bash scripts/test.sh "${files[@]}" "$@"
