/**
 * langgraph.json is read as LangGraph reads it and refused where agentcli cannot serve it
 * (every problem named with the file and the key), and graph modules load as LangGraph's
 * loader loads them: TypeScript whose type-only imports lack `import type`, `./x.js` naming
 * `./x.ts`, Promise exports, the SDK logger at import; a module that cannot load stops the
 * start naming the graph, the module and the cause.
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { loadProject } from "../../core/config/index.ts";
import { loadGraphModules } from "../../core/server/host/agent-host.ts";
import { PluginDriver } from "../../core/kernel/index.ts";
import { ROOT, startLangGraphDev } from "./_dev.ts";

let dir: string;
const write = (path: string, text: string) => {
  mkdirSync(join(dir, path, ".."), { recursive: true });
  writeFileSync(join(dir, path), text);
};
const GRAPH = `import { Annotation, START, StateGraph } from "@langchain/langgraph";
const S = Annotation.Root({ v: Annotation<number> });
export const graph = new StateGraph(S).addNode("n", () => ({ v: 1 })).addEdge(START, "n").compile();
`;

before(() => {
  dir = mkdtempSync(join(tmpdir(), "agentcli-langgraph-loading-"));
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
  write("types.ts", "export interface Input { v: number }\nexport type Name = string;\n");
  write(
    "typed.ts",
    `import { Annotation, START, StateGraph } from "@langchain/langgraph";
import { Input, Name } from "./types.js";
import { getLogger } from "@langchain/langgraph-sdk/logging";
getLogger().info("typed loaded", { at: "import" });
const name: Name = "n";
const S = Annotation.Root({ v: Annotation<number> });
export const graph = Promise.resolve(
  new StateGraph(S).addNode(name, (s: Input) => ({ v: s.v + 1 })).addEdge(START, name).compile(),
);
`,
  );
  write("broken.ts", "import { nothing } from './missing.ts';\nexport const graph = nothing;\n");
  write("number.ts", "export const graph = Promise.resolve(42);\n");
  write("ok.ts", GRAPH);
});
after(() => rmSync(dir, { recursive: true, force: true }));

const driver = new PluginDriver([]);
const load = (json: unknown) => {
  write("langgraph.json", typeof json === "string" ? json : JSON.stringify(json));
  return loadProject(dir, { driver, env: {}, requireEnv: false, cwd: dir });
};
const problems = async (json: unknown): Promise<string> => {
  try {
    await load(json);
  } catch (err) {
    const e = err as Error & { diagnostics?: Array<{ file: string; message: string }> };
    return [e.message, ...(e.diagnostics ?? []).map((d) => `${d.file}: ${d.message}`)].join("\n");
  }
  throw new Error("loaded");
};

describe("langgraph.json", () => {
  test("a folder with langgraph.json and no agent.toml is a LangGraph.js project", async () => {
    const p = await load({
      graphs: { ok: "./ok.ts:graph", plain: { path: "./typed.ts", description: "typed" } },
      env: { A: "1" },
      http: { app: "./ok.ts:app", disable_store: true },
      auth: { path: "./ok.ts:auth" },
      store: { index: { embed: "openai:text-embedding-3-small", dims: 1536, fields: ["$.text"] } },
      checkpointer: { ttl: { strategy: "delete", default_ttl: 60, sweep_interval_minutes: 2 } },
      node_version: "22",
      dependencies: ["."],
    });
    const lg = p.config.langgraph!;
    assert.deepEqual(lg.graphs, {
      ok: { path: "ok.ts", exportName: "graph" },
      plain: { path: "typed.ts", description: "typed" },
    });
    assert.deepEqual(lg.auth, { path: "ok.ts", exportName: "auth" });
    assert.equal(lg.http.disable.store, true);
    assert.equal(p.env.A, "1");
    assert.equal(p.env.AGENTCLI_STORE_EMBEDDINGS, "openai:text-embedding-3-small");
    assert.equal(p.env.AGENTCLI_THREAD_TTL_MINUTES, "60");
    assert.equal(p.env.AGENTCLI_TTL_SWEEP_SECONDS, "120");
    assert.ok(p.files.has("ok.ts") && p.files.has("langgraph.json"));
  });

  test("unknown and unsupported keys are errors naming the key and the file", async () => {
    const text = await problems({
      graphs: { ok: "./ok.ts" },
      python_version: "3.12",
      ui_config: { shared: ["clsx"] },
      colour: "blue",
      http: { app: "./ok.ts:app", mount_prefix: "/x" },
    });
    assert.match(text, /langgraph\.json: key "python_version" is not supported: a Python key/);
    assert.match(
      text,
      /langgraph\.json: key "ui_config" is not supported: agentcli builds UI components without a bundler/,
    );
    assert.match(text, /langgraph\.json: key "colour" is not a langgraph\.json key agentcli knows/);
    assert.match(text, /langgraph\.json: key "http\.mount_prefix" is not a langgraph\.json key/);
  });

  test("bad values and missing modules are named", async () => {
    assert.match(await problems("{ nope"), /langgraph\.json: is not valid JSON/);
    assert.match(await problems({ graphs: {} }), /"graphs" must name at least one graph/);
    assert.match(
      await problems({ graphs: { a: "./missing.ts:graph" }, env: "./.env.missing" }),
      /"graphs\.a" names missing\.ts, which is not a file of the project[\s\S]*|"env" names/,
    );
    assert.match(await problems({ graphs: { a: "./ok.ts" }, auth: { path: "./ok.ts" } }), /"auth\.path" must name/);
    assert.match(
      await problems({ graphs: { a: "./ok.ts" }, ui: { a: "./missing-ui.tsx" } }),
      /"ui\.a" names missing-ui\.tsx, which is not a file of the project/,
    );
  });
});

describe("graph modules load as LangGraph's loader loads them", () => {
  test("type-only imports without `import type`, ./x.js for ./x.ts, a Promise export, the SDK logger", async () => {
    const lines: string[] = [];
    const log = { info: (m: string) => lines.push(m), warn: (m: string) => lines.push(m), error: () => {} };
    const g = await loadGraphModules({ typed: { path: join(dir, "typed.ts"), config: "langgraph.json" } }, { log });
    assert.deepEqual(await (g.typed as { invoke(i: unknown): Promise<unknown> }).invoke({ v: 1 }), { v: 2 });
    assert.ok(lines.some((l) => l.includes("typed loaded") && l.includes('"at":"import"')), lines.join("\n"));
  });

  test("a module that cannot load, or a Promise of no graph, is named with its cause", async () => {
    await assert.rejects(
      loadGraphModules({ b: { path: join(dir, "broken.ts"), config: "langgraph.json" } }),
      /Cannot load graph "b" of langgraph\.json from .*broken\.ts: .*missing\.ts/,
    );
    await assert.rejects(
      loadGraphModules({ n: { path: join(dir, "number.ts"), config: "langgraph.json" } }),
      /Cannot serve graph "n" of langgraph\.json: .*number\.ts export "graph" is a number \(42\), not a graph/,
    );
  });

  test("agentcli dev stops at start naming the graph that does not load", async () => {
    const project = mkdtempSync(join(tmpdir(), "agentcli-langgraph-broken-"));
    try {
      writeFileSync(join(project, "broken.ts"), "throw new Error('boom at import');\n");
      writeFileSync(join(project, "langgraph.json"), JSON.stringify({ graphs: { b: "./broken.ts:graph" } }));
      const dev = await startLangGraphDev(project, { expectExit: true });
      const code = await dev.exited;
      await dev.stop();
      assert.equal(code, 1, dev.output());
      assert.match(dev.output(), /Cannot load graph "b" of langgraph\.json from .*broken\.ts: boom at import/);
    } finally {
      rmSync(project, { recursive: true, force: true });
    }
  });
});
