/**
 * `agentcli dev` ranks store searches with pgvector on its embedded database in every launch
 * mode: from the sources on Node, on Deno, and as the executable (`dist/agentcli`, after
 * `npm run build`, run from a copy outside the checkout so nothing resolves from the
 * repository's node_modules: the extension comes from its assets). Through the LangGraph SDK,
 * with the model server's OpenAI-wire embeddings; `/info` names the engine.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { copyFileSync, cpSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, test } from "node:test";
import { Client } from "@langchain/langgraph-sdk";
import { SERVING, type Serving, spawnServing } from "../_spawn-serving.ts";
import { type ModelServer, startModelServer } from "../fixtures/model-server/server.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
const EXE = join(ROOT, "dist/agentcli");
const DENO = [join(ROOT, "node_modules/@deno/linux-x64-glibc/deno"), join(ROOT, "node_modules/deno/deno")].find((p) =>
  existsSync(p)
);

const MODES: Record<string, { cmd: () => string[]; skip: string | false }> = {
  "node bin/agentcli.js dev": { cmd: () => [process.execPath, join(ROOT, "bin/agentcli.js")], skip: false },
  "deno bin/main.ts dev": {
    cmd: () => [DENO!, "run", "-A", join(ROOT, "bin/main.ts")],
    skip: DENO ? false : "no deno binary in node_modules",
  },
  "dist/agentcli dev": {
    cmd: () => [EXE],
    skip: existsSync(EXE) ? false : "dist/agentcli is not built (npm run build)",
  },
};

let models: ModelServer;
before(async () => {
  models = await startModelServer();
});
after(() => models?.close());

for (const [mode, { cmd, skip }] of Object.entries(MODES)) {
  test(`${mode}: store search ranks with pgvector on the embedded database`, { skip }, async () => {
    const work = mkdtempSync(join(tmpdir(), "agentcli-store-search-"));
    let dev: Serving | undefined;
    try {
      cpSync(join(ROOT, "examples/research"), join(work, "project"), {
        recursive: true,
        filter: (src) => !src.includes(".agentcli") && !src.endsWith(".env"),
      });
      let argv = cmd();
      if (argv[0] === EXE) {
        copyFileSync(EXE, join(work, "agentcli"));
        argv = [join(work, "agentcli")];
      }
      dev = await spawnServing({
        serving: SERVING.dev,
        start: (port) =>
          spawn(argv[0]!, [...argv.slice(1), "dev", "--port", String(port)], {
            cwd: join(work, "project"),
            env: {
              PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ""}`,
              HOME: work,
              NO_COLOR: "1",
              AGENTCLI_STORE_EMBEDDINGS: "openai:text-embedding-3-small",
              OPENAI_API_KEY: "sk-test",
              OPENAI_BASE_URL: models.openaiBaseUrl,
            },
            stdio: ["ignore", "pipe", "pipe"],
          }),
      });
      const client = new Client({ apiUrl: dev.url, apiKey: null, callerOptions: { maxRetries: 0 } });
      await client.store.putItem(["docs"], "k1", { text: "the cat sat on the mat" }, { index: ["text"] });
      await client.store.putItem(["docs"], "k2", { text: "stock market prices fell" }, { index: ["text"] });
      await client.store.putItem(["docs"], "k3", { text: "a mat" }, { index: ["text"] });
      const { items } = await client.store.searchItems(["docs"], { query: "cat on the mat" });
      assert.deepEqual(items.map((i) => i.key), ["k1", "k3", "k2"], dev.output());
      const info = await (await fetch(`${dev.url}/info`)).json() as { store_search: unknown };
      assert.deepEqual(info.store_search, {
        query: "vector",
        model: "openai:text-embedding-3-small",
        engine: "pgvector",
      });
    } finally {
      await dev?.stop();
      rmSync(work, { recursive: true, force: true });
    }
  });
}
