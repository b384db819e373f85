/**
 * `--graph` accepts what langgraph.json accepts and refuses anything else at start: module
 * exports are checked when the server starts (naming the module and what it found), an id
 * given twice or the project's agent id (without `--replace-agent`) is refused, and the
 * CLI stops with that error instead of failing every run.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, before, describe, test } from "node:test";
import { loadGraphModules, parseGraphFlags } from "../../core/server/host/agent-host.ts";
import { makeProject, removeProject } from "../toolchain/_project.ts";

const GRAPHS = resolve(import.meta.dirname, "../fixtures/graphs/compat");
let dir: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), "agentcli-graph-flag-"));
  writeFileSync(join(dir, "number.ts"), "export const graph = 42;\n");
  writeFileSync(join(dir, "plain.ts"), "export const graph = { nodes: {} };\nexport const other = 1;\n");
  writeFileSync(join(dir, "broken.ts"), "throw new Error('boom at import');\n");
});
after(() => rmSync(dir, { recursive: true, force: true }));

describe("--graph", () => {
  test("parses <id>=<module>[:<export>]; refuses the agent's id unless --replace-agent, and duplicates", () => {
    assert.deepEqual(parseGraphFlags(["a=./g.ts", "b=./g.ts:other"], "/p"), {
      a: { path: "/p/g.ts" },
      b: { path: "/p/g.ts", exportName: "other" },
    });
    assert.throws(
      () => parseGraphFlags(["agent=./g.ts"], "/p"),
      /Cannot serve --graph "agent": that id is the project's agent/,
    );
    assert.deepEqual(parseGraphFlags(["agent=./g.ts"], "/p", { replaceAgent: true }), { agent: { path: "/p/g.ts" } });
    assert.throws(() => parseGraphFlags(["a=./g.ts", "a=./h.ts"], "/p"), /twice/);
    assert.throws(() => parseGraphFlags(["nope"], "/p"), /expected <id>=<module path>/);
  });

  test("loads compiled graphs, StateGraphs and factories; refuses anything else naming the module and what it found", async () => {
    const ok = await loadGraphModules({
      chain: { path: join(GRAPHS, "chain.ts") },
      builder: { path: join(GRAPHS, "uncompiled.ts") },
      factory: { path: join(GRAPHS, "factory.ts"), exportName: "graph" },
    });
    assert.equal(typeof (ok.chain as { stream: unknown }).stream, "function");
    assert.equal(typeof (ok.builder as { compile: unknown }).compile, "function");
    assert.equal(typeof ok.factory, "function");
    await assert.rejects(loadGraphModules({ n: { path: join(dir, "number.ts") } }), (err: Error) => {
      assert.match(
        err.message,
        /Cannot serve --graph "n": .*number\.ts export "graph" is a number \(42\), not a graph/,
      );
      return true;
    });
    await assert.rejects(
      loadGraphModules({ p: { path: join(dir, "plain.ts"), exportName: "nothing" } }),
      /export "nothing" is nothing \(undefined\).*exports "graph", "other"/,
    );
    await assert.rejects(
      loadGraphModules({ p: { path: join(dir, "plain.ts") } }),
      /export "graph" is an object with keys "nodes", not a graph/,
    );
    await assert.rejects(
      loadGraphModules({ b: { path: join(dir, "broken.ts") } }),
      /Cannot load --graph "b" from .*broken\.ts: boom at import/,
    );
  });

  test("agentcli dev stops at start on a colliding id or a bad export", () => {
    const project = makeProject();
    try {
      const run = (args: string[]) =>
        spawnSync(process.execPath, [
          resolve(import.meta.dirname, "../../bin/agentcli.js"),
          "dev",
          "--port",
          "0",
          ...args,
        ], {
          cwd: project,
          env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp" },
          encoding: "utf8",
          timeout: 300_000,
        });
      const collide = run(["--graph", `agent=${join(GRAPHS, "chain.ts")}`]);
      assert.equal(collide.status, 2, collide.stderr + collide.stdout); // a usage error
      assert.match(collide.stderr + collide.stdout, /that id is the project's agent[\s\S]*--replace-agent/);
      const bad = run(["--graph", `n=${join(dir, "number.ts")}`]);
      assert.equal(bad.status, 2, bad.stderr + bad.stdout);
      assert.match(bad.stderr + bad.stdout, /number\.ts export "graph" is a number \(42\), not a graph/);
    } finally {
      removeProject(project);
    }
  });
});
