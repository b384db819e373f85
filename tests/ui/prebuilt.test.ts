/**
 * The chat UI is built ahead of time (`npm ci`'s prepare step, `npm run build:ui`), never in
 * the server process: opening `/app` serves files and leaves `dev`'s memory where it was
 * (building it in the server took ~1.6 s and ~380 MB).
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { startAgent } from "./_agent.ts";

const rssMb = (pid: number) =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) / 1024;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test("opening /app serves the prebuilt UI without building it: dev's RSS does not change", async () => {
  const agent = await startAgent("basic", {});
  try {
    // Everything behind /ok is loaded once the API answers; then let the process settle.
    assert.equal(
      (await fetch(`${agent.url}/assistants/search`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      })).status,
      200,
    );
    await sleep(1500);
    const before = rssMb(agent.pid);
    const page = await fetch(`${agent.url}/app/`);
    assert.equal(page.status, 200);
    const html = await page.text();
    const assets = [...html.matchAll(/(?:src|href)="\/app\/(assets\/[^"]+)"/g)].map((m) => m[1]!);
    assert.ok(assets.length > 0, "index.html names its script and style assets");
    for (const a of assets) assert.equal((await fetch(`${agent.url}/app/${a}`)).status, 200, a);
    await sleep(1500);
    const after = rssMb(agent.pid);
    assert.ok(
      after - before < 40,
      `RSS went from ${before.toFixed(0)} MB to ${after.toFixed(0)} MB when /app was opened`,
    );
    assert.doesNotMatch(agent.output(), /building the chat UI/);
  } finally {
    await agent.close();
  }
});
