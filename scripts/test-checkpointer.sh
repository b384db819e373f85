#!/usr/bin/env bash
# `npm run test:checkpointer`: LangGraph's checkpointer validation suite
# (@langchain/langgraph-checkpoint-validation, a Vitest suite) over our SqlCheckpointSaver,
# on PGlite and then on PostgreSQL (AGENTCLI_TEST_DATABASE_URL, a fresh schema per checkpointer).
set -euo pipefail
cd "$(dirname "$0")/.."
node_bin=node_modules/.bin/node
export AGENTCLI_TEST_DATABASE_URL="${AGENTCLI_TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test}"
for driver in pglite postgres; do
  echo "# checkpointer validation on $driver"
  AGENTCLI_CHECKPOINTER_DRIVER=$driver "$node_bin" node_modules/vitest/vitest.mjs run --globals --reporter=dot tests/checkpointer/validation.spec.ts
done
