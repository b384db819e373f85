/** Bundles are deterministic, verified on read, and carry no secret values. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { loadPlugins } from "../../core/kernel/plugins.ts";
import { builtinPlugins } from "../../plugins/registry.ts";
import { loadProject } from "../../core/config/load.ts";
import { buildBundle, readBundle } from "../../core/bundle/bundle.ts";
import { packTar, unpackTar } from "../../core/bundle/tar.ts";
import { AgentcliError } from "../../core/kernel/errors.ts";
import { makeProject, removeProject } from "./_project.ts";

const driver = await loadPlugins(builtinPlugins);

test("two bundles of the same project are byte-identical, also from separate copies", async () => {
  const files = {
    "user/AGENTS.md": "Notes\n",
    "subagents/r/agent.toml": '[agent]\nname = "r"\ndescription = "d"\nmodel = "anthropic:claude-sonnet-4-5"\n',
    "subagents/r/AGENTS.md": "x\n",
    ".env": "OPENAI_API_KEY=a\nANTHROPIC_API_KEY=b\n",
  };
  const a = makeProject(files);
  const b = makeProject(files);
  try {
    const pa = await loadProject(join(a, "agent.toml"), { driver, env: {}, requireEnv: true, cwd: a });
    const pb = await loadProject(join(b, "agent.toml"), { driver, env: {}, requireEnv: true, cwd: b });
    const x = await buildBundle(pa, { driver, version: "1" });
    const y = await buildBundle(pa, { driver, version: "1" });
    const z = await buildBundle(pb, { driver, version: "1" });
    assert.deepEqual(x.bytes, y.bytes);
    assert.deepEqual(x.bytes, z.bytes);
    assert.deepEqual(x.manifest.requires.packages, [
      "@langchain/anthropic",
      "@langchain/langgraph",
      "@langchain/openai",
      "@modelcontextprotocol/sdk",
      "deepagents",
    ]);
    assert.deepEqual(x.manifest.secrets, ["ANTHROPIC_API_KEY", "OPENAI_API_KEY"]);
    const read = await readBundle(x.bytes);
    assert.equal(read.config.agent.name, "fixture");
    assert.equal(new TextDecoder().decode(read.files.get("user/AGENTS.md")), "Notes\n");
    assert.ok(!Buffer.from(gunzipSync(x.bytes)).includes("OPENAI_API_KEY=a"));
  } finally {
    removeProject(a);
    removeProject(b);
  }
});

test("a damaged or foreign bundle is a clear error", async () => {
  const bad = async (bytes: Uint8Array, re: RegExp) =>
    assert.rejects(
      readBundle(bytes, "x.tgz"),
      (e: unknown) =>
        e instanceof AgentcliError && re.test(e.message) && /agentcli deploy --dry-run/.test(e.hint ?? ""),
    );
  await bad(new TextEncoder().encode("not gzip"), /not a bundle archive/);
  await bad(gzipSync(packTar(new Map([["hello.txt", new Uint8Array([1])]]))), /no manifest\.json/);
  const dir = makeProject();
  try {
    const p = await loadProject(join(dir, "agent.toml"), { driver, env: {}, requireEnv: false, cwd: dir });
    const { bytes } = await buildBundle(p, { driver, version: "1" });
    const entries = unpackTar(gunzipSync(bytes));
    entries.set("project/AGENTS.md", new TextEncoder().encode("tampered"));
    await bad(gzipSync(packTar(entries)), /does not match its checksum/);
  } finally {
    removeProject(dir);
  }
});

test("tar round-trips long paths and refuses unsafe ones", () => {
  const long = `${"d".repeat(80)}/${"e".repeat(60)}/file.md`;
  const files = new Map([[long, new Uint8Array([1, 2, 3])], ["a.txt", new Uint8Array(0)]]);
  assert.deepEqual(unpackTar(packTar(files)), files);
  const evil = packTar(new Map([["x/../../etc/passwd", new Uint8Array([1])]]));
  assert.throws(() => unpackTar(evil), /unsafe path/);
});
