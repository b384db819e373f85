/**
 * Graph modules load as LangGraph's loader loads them, side by side (`--peer`: the same
 * langgraph.json under `langgraph-cli dev`): a Promise export, types imported without
 * `import type` (and `./types.js` naming types.ts), LangGraph's SDK logger called at import,
 * and `LANGGRAPH_CONFIG` giving the default assistant its config. Ours runs `agentcli dev` on
 * the project folder (found without --config).
 */
import assert from "node:assert/strict";
import { cpSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, before, describe, test } from "node:test";
import { Client } from "@langchain/langgraph-sdk";
import { SERVING } from "../_spawn-serving.ts";
import { agentcliDevCommand, type DevProcess, peerDevCommand, startDevProcess } from "../fixtures/dev-process.ts";
import { PEER } from "./_target.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const LANGGRAPH_CONFIG = JSON.stringify({ configured: { configurable: { who: "from LANGGRAPH_CONFIG" } } });
let dir: string;
let dev: DevProcess;
let client: Client;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), "agentcli-compat-loading-"));
  cpSync(join(ROOT, "tests/fixtures/graphs/compat-loading"), dir, { recursive: true });
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
  writeFileSync(
    join(dir, "langgraph.json"),
    JSON.stringify({
      node_version: "22",
      dependencies: ["."],
      graphs: { typed: "./typed.ts:graph", configured: "./configured.ts:graph" },
    }),
  );
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "compat-loading", private: true, type: "module" }));
  dev = await startDevProcess({
    argv: (port) => PEER ? peerDevCommand(port) : agentcliDevCommand(port, ["--allow-blocking"]),
    serving: PEER ? undefined : SERVING.dev,
    cwd: dir,
    env: { ...process.env, LANGGRAPH_CONFIG, LANGGRAPH_CLI_NO_ANALYTICS: "1", BROWSER: "none" },
    group: true,
    onStop: () => rmSync(dir, { recursive: true, force: true }),
  });
  client = new Client({ apiUrl: dev.url, apiKey: null, callerOptions: { maxRetries: 0 } });
});

after(async () => {
  await dev?.stop();
});

describe("graph modules load as LangGraph's loader loads them", () => {
  test("a Promise export with type-only imports runs, and its SDK logger call at import is logged", async () => {
    const out = await client.runs.wait(null, "typed", { input: { n: 1 } }) as { n: number; label: string };
    assert.deepEqual(out, { n: 3, label: "typed" });
    assert.match(dev.output(), /compat-loading typed graph imported/);
  });

  test("LANGGRAPH_CONFIG gives the graph's default assistant its config", async () => {
    const [assistant] = await client.assistants.search({ graphId: "configured", limit: 1 });
    assert.equal(assistant!.config?.configurable?.who, "from LANGGRAPH_CONFIG");
    const out = await client.runs.wait(null, "configured", { input: {} }) as { seen: string };
    assert.equal(out.seen, "from LANGGRAPH_CONFIG");
  });
});
