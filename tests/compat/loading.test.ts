/**
 * Graph modules load as LangGraph's loader loads them, side by side (`--peer`: the same
 * langgraph.json under `langgraph-cli dev`): a Promise export, types imported without
 * `import type` (and `./types.js` naming types.ts), LangGraph's SDK logger called at import,
 * and `LANGGRAPH_CONFIG` giving the default assistant its config. Ours runs `agentcli dev` on
 * the project folder (found without --config).
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { cpSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, before, describe, test } from "node:test";
import { Client } from "@langchain/langgraph-sdk";
import { freePort } from "../../plugins/compute/revision-process.ts";
import { PEER, peerDevCommand } from "./_target.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const LANGGRAPH_CONFIG = JSON.stringify({ configured: { configurable: { who: "from LANGGRAPH_CONFIG" } } });
let dir: string;
let child: ChildProcess;
let client: Client;
let output = "";

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
  const port = await freePort("127.0.0.1");
  const args = PEER
    ? peerDevCommand(port)
    : [process.execPath, join(ROOT, "bin/main.ts"), "dev", "--port", String(port), "--allow-blocking"];
  child = spawn(args[0]!, args.slice(1), {
    cwd: dir,
    env: { ...process.env, LANGGRAPH_CONFIG, LANGGRAPH_CLI_NO_ANALYTICS: "1", BROWSER: "none" },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  child.stdout!.on("data", (d) => (output += d));
  child.stderr!.on("data", (d) => (output += d));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0;; i++) {
    if (child.exitCode !== null) throw new Error(`the server exited:\n${output}`);
    if (await fetch(`${url}/info`).then((r) => r.ok, () => false)) break;
    if (i > 1200) throw new Error(`the server did not start:\n${output}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  client = new Client({ apiUrl: url, apiKey: null, callerOptions: { maxRetries: 0 } });
});

after(async () => {
  if (child?.exitCode === null && child.pid) {
    const exited = new Promise((r) => child.once("exit", r));
    process.kill(-child.pid, "SIGTERM");
    await exited;
  }
  rmSync(dir, { recursive: true, force: true });
});

describe("graph modules load as LangGraph's loader loads them", () => {
  test("a Promise export with type-only imports runs, and its SDK logger call at import is logged", async () => {
    const out = await client.runs.wait(null, "typed", { input: { n: 1 } }) as { n: number; label: string };
    assert.deepEqual(out, { n: 3, label: "typed" });
    assert.match(output, /compat-loading typed graph imported/);
  });

  test("LANGGRAPH_CONFIG gives the graph's default assistant its config", async () => {
    const [assistant] = await client.assistants.search({ graphId: "configured", limit: 1 });
    assert.equal(assistant!.config?.configurable?.who, "from LANGGRAPH_CONFIG");
    const out = await client.runs.wait(null, "configured", { input: {} }) as { seen: string };
    assert.equal(out.seen, "from LANGGRAPH_CONFIG");
  });
});
