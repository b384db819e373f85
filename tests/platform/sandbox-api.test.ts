/**
 * The control plane's sandbox API, driven by LangSmith's own client (`langsmith/sandbox`,
 * WebSocket execute when `ws` is installed, as here) and by deepagents' `LangSmithSandbox`
 * on top of it, against real bubblewrap sandboxes (the local sandbox runtime): commands,
 * binary files, persistence, stop/resume, isolation, tenancy, auth and bad input. On this
 * runtime a command's stderr comes within its stdout, once it ends.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { LangSmithSandbox } from "deepagents";
import {
  LangSmithCommandTimeoutError,
  LangSmithResourceNotFoundError,
  LangSmithSandboxAuthenticationError,
  LangSmithValidationError,
  type Sandbox,
  SandboxClient,
} from "langsmith/sandbox";
import WebSocket from "ws";
import { startTestPlatform, type TestPlatform } from "./_harness.ts";

let t: TestPlatform;
let url: string;
let a: SandboxClient;
let b: SandboxClient;
let box: Sandbox;

const client = (apiKey: string | undefined) =>
  new SandboxClient({ apiEndpoint: `${url}/v2/sandboxes`, apiKey, maxRetries: 0 });

before(async () => {
  process.env.AGENTCLI_TEST_SERVER_SECRET = "do-not-leak";
  t = await startTestPlatform({ listen: { port: 0 }, sandboxSweepMs: 0 });
  url = t.platform.listening!.url;
  a = client(t.keyA);
  b = client(t.keyB);
  box = await a.createSandbox({ name: "box-a" });
});

after(async () => {
  await t?.close();
  delete process.env.AGENTCLI_TEST_SERVER_SECRET;
});

describe("the langsmith/sandbox client", () => {
  test("creates a ready sandbox with a data plane URL, lists and gets it", async () => {
    assert.equal(box.status, "ready");
    assert.equal(box.dataplane_url, `${url}/v2/sandboxes/dataplane/${box.id}`);
    assert.equal(box.idle_ttl_seconds, 600);
    assert.deepEqual((await a.listSandboxes()).map((s) => s.name), ["box-a"]);
    assert.equal((await a.getSandbox("box-a")).id, box.id);
    assert.deepEqual(await a.getSandboxStatus("box-a"), { status: "ready" });
  });

  test("runs commands over the WebSocket: output (stderr within stdout on this runtime) and exit code", async () => {
    const r = await box.run("echo out; echo err >&2; exit 3");
    assert.deepEqual(r, { stdout: "out\nerr\n", stderr: "", exit_code: 3 });
  });

  test("accepts env, cwd and another shell", async () => {
    const seen: string[] = [];
    const r = await box.run('for i in 1 2; do echo "$GREETING $i"; done; pwd', {
      env: { GREETING: "it's me" },
      cwd: "/tmp",
      onStdout: (d) => seen.push(d),
    });
    assert.equal(r.stdout, "it's me 1\nit's me 2\n/tmp\n");
    assert.equal(seen.join(""), r.stdout);
    assert.equal((await box.run("echo $0", { shell: "/bin/sh" })).stdout, "/bin/sh\n");
  });

  test("a non-blocking command can be re-attached by its command id, from a byte offset", async () => {
    const h = await box.run("echo started; sleep 0.3; echo done", { wait: false });
    assert.ok(h.commandId);
    const again = await box.reconnect(h.commandId!, { stdoutOffset: 0 });
    assert.deepEqual(await again.result, { stdout: "started\ndone\n", stderr: "", exit_code: 0 });
    assert.equal((await h.result).stdout, "started\ndone\n");
    const late = await box.reconnect(h.commandId!, { stdoutOffset: "started\n".length });
    assert.deepEqual(await late.result, { stdout: "done\n", stderr: "", exit_code: 0 });
  });

  test("a command past its timeout is killed with a timeout error", async () => {
    const started = Date.now();
    await assert.rejects(box.run("sleep 20", { timeout: 1 }), LangSmithCommandTimeoutError);
    assert.ok(Date.now() - started < 15_000);
    assert.equal((await box.run("echo still-alive")).stdout, "still-alive\n");
  });

  test("the blocking HTTP execute answers the same", async () => {
    const res = await fetch(`${box.dataplane_url}/execute`, {
      method: "POST",
      headers: { "x-api-key": t.keyA, "content-type": "application/json" },
      body: JSON.stringify({ command: "echo http; exit 4" }),
    });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { stdout: "http\n", stderr: "", exit_code: 4 });
  });

  test("uploads and downloads binary files byte for byte, into new folders", async () => {
    const bytes = new Uint8Array(1_500_000).map((_, i) => (i * 31) % 256); // past the JSON body limit (1 MiB)
    await box.write("/workspace/data/blob.bin", bytes);
    assert.deepEqual(await box.read("/workspace/data/blob.bin"), bytes);
    assert.equal((await box.run("wc -c < data/blob.bin")).stdout.trim(), "1500000");
    await box.write("/workspace/hello.txt", "héllo");
    assert.equal(new TextDecoder().decode(await box.read("/workspace/hello.txt")), "héllo");
  });

  test("reading a missing file or a folder is a clear error", async () => {
    await assert.rejects(
      box.read("/workspace/nope.txt"),
      (e: Error) => e instanceof LangSmithResourceNotFoundError && /no such file/.test(e.message),
    );
    await assert.rejects(box.read("/workspace"), /is a directory/);
    await assert.rejects(box.write("/proc/nope/x", "x"), /Cannot write/);
  });

  test("files persist across commands, a stop and a resume", async () => {
    await box.run("echo kept > kept.txt");
    await a.stopSandbox("box-a");
    assert.equal((await a.getSandbox("box-a")).status, "stopped");
    assert.equal((await box.run("cat kept.txt")).stdout, "kept\n");
    assert.equal((await a.getSandbox("box-a")).status, "ready");
  });

  test("a sandbox sees no server environment, no network, no other sandbox and not the data folder", async () => {
    const other = await a.createSandbox({ name: "box-a2" });
    try {
      await other.run("echo mine > secret.txt");
      const r = await box.run(
        `env; echo ---; ls ${
          join(t.dataDir, "sandboxes")
        } 2>&1; ls ${t.dataDir} 2>&1; echo ---; (exec 3<>/dev/tcp/127.0.0.1/${
          new URL(url).port
        }) 2>&1 || echo no-network`,
      );
      assert.doesNotMatch(r.stdout, /do-not-leak|AGENTCLI_TEST_SERVER_SECRET/);
      assert.doesNotMatch(r.stdout, new RegExp(other.id!));
      assert.doesNotMatch(r.stdout, /secret\.txt/);
      assert.match(r.stdout, /no-network/);
    } finally {
      await other.delete();
    }
  });

  test("rename, then delete: the sandbox and its files are gone", async () => {
    const tmp = await a.createSandbox({ name: "short-lived" });
    const renamed = await a.updateSandbox("short-lived", { newName: "renamed", idleTtlSeconds: 120 });
    assert.equal(renamed.name, "renamed");
    assert.equal(renamed.idle_ttl_seconds, 120);
    await assert.rejects(a.createSandbox({ name: "box-a" }), /exists/);
    await renamed.delete();
    await assert.rejects(a.getSandbox("renamed"), LangSmithResourceNotFoundError);
    const ref =
      (await t.platform.sql.query<{ runtime_ref: string }>("SELECT runtime_ref FROM platform_sandboxes WHERE id = $1", [
        tmp.id,
      ])).rows[0];
    assert.equal(ref, undefined);
    assert.deepEqual(
      readdirSync(join(t.dataDir, "sandboxes")).filter((d) => !d.startsWith(".")).length,
      (await a.listSandboxes()).length,
    );
  });

  test("an idle sandbox is stopped by the sweep and comes back on use", async () => {
    const idle = await a.createSandbox({ name: "idle", idleTtlSeconds: 60 });
    await t.platform.sql.query(
      "UPDATE platform_sandboxes SET last_used_at = now() - interval '2 minutes' WHERE id = $1",
      [idle.id],
    );
    await t.platform.services.sandboxes.sweep();
    assert.equal((await a.getSandbox("idle")).status, "stopped");
    assert.equal((await box.run("echo ok")).exit_code, 0);
    assert.equal((await idle.run("echo back")).stdout, "back\n");
    await idle.delete();
  });
});

describe("deepagents' LangSmithSandbox on our control plane", () => {
  test("execute, upload/download and the file tools act on the sandbox", async () => {
    const ds = new LangSmithSandbox({ sandbox: box, defaultTimeout: 30 });
    assert.deepEqual(await ds.execute("echo deep; exit 2"), { output: "deep\n", exitCode: 2, truncated: false });
    const up = await ds.uploadFiles([["/workspace/up.bin", new Uint8Array([0, 1, 2, 255])]]);
    assert.deepEqual(up, [{ path: "/workspace/up.bin", error: null }]);
    const down = await ds.downloadFiles(["/workspace/up.bin", "/workspace/missing"]);
    assert.deepEqual([...down[0]!.content!], [0, 1, 2, 255]);
    assert.equal(down[1]!.error, "file_not_found");
    assert.equal((await ds.write("/workspace/notes/a.md", "alpha\nbeta\n")).error, undefined);
    assert.equal((await ds.edit("/workspace/notes/a.md", "beta", "gamma")).error, undefined);
    const read = await ds.read("/workspace/notes/a.md");
    assert.match(String(read.content), /alpha[\s\S]*gamma/);
    const ls = await ds.ls("/workspace/notes");
    assert.deepEqual(ls.files?.map((f) => f.path), ["/workspace/notes/a.md"]);
    const grep = await ds.grep("gamma", "/workspace");
    assert.deepEqual(grep.matches?.map((m) => m.path), ["/workspace/notes/a.md"]);
    const glob = await ds.glob("**/*.md", "/workspace");
    assert.ok(glob.files?.some((f) => f.path.endsWith("notes/a.md")));
    assert.equal((await box.run("cat notes/a.md")).stdout, "alpha\ngamma\n");
  });
});

describe("snapshots", () => {
  test("an image snapshot, and a captured one that deepagents' LangSmithSandbox.create boots from", async () => {
    const py = await a.createSnapshot("py", "python:3.12", 2 ** 30);
    assert.equal(py.status, "ready");
    assert.equal(py.docker_image, "python:3.12");
    await box.run("mkdir -p proj && echo 'print(42)' > proj/main.py");
    const captured = await box.captureSnapshot("with-project");
    assert.equal(captured.source_sandbox_id, box.id);
    assert.deepEqual((await a.listSnapshots({ nameContains: "WITH" })).map((s) => s.name), ["with-project"]);
    assert.equal((await a.getSnapshot(py.id)).name, "py");
    await assert.rejects(b.getSnapshot(py.id), LangSmithResourceNotFoundError);

    const fromImage = await a.createSandbox(py.id, { name: "from-image" });
    assert.equal(fromImage.snapshot_id, py.id);
    await fromImage.delete();

    process.env.LANGSMITH_ENDPOINT = url;
    try {
      const ds = await LangSmithSandbox.create({ snapshotId: captured.id, apiKey: t.keyA, defaultTimeout: 30 });
      assert.deepEqual(await ds.execute("cat proj/main.py"), { output: "print(42)\n", exitCode: 0, truncated: false });
      await ds.close();
      await assert.rejects(a.getSandbox(ds.id), LangSmithResourceNotFoundError);
    } finally {
      delete process.env.LANGSMITH_ENDPOINT;
    }
    await a.deleteSnapshot(captured.id);
    await a.deleteSnapshot(py.id);
    assert.deepEqual(await a.listSnapshots(), []);
  });
});

describe("tenancy, auth and bad input", () => {
  test("another tenant never reaches a sandbox: not listed, not found, its data plane refused", async () => {
    assert.deepEqual(await b.listSandboxes(), []);
    await assert.rejects(b.getSandbox("box-a"), LangSmithResourceNotFoundError);
    await assert.rejects(b.deleteSandbox("box-a"), LangSmithResourceNotFoundError);
    const res = await fetch(`${box.dataplane_url}/execute`, {
      method: "POST",
      headers: { "x-api-key": t.keyB, "content-type": "application/json" },
      body: JSON.stringify({ command: "ls" }),
    });
    assert.equal(res.status, 404);
    const dl = await fetch(`${box.dataplane_url}/download?path=/workspace/kept.txt`, {
      headers: { "x-api-key": t.keyB },
    });
    assert.equal(dl.status, 404);
    const status = await wsStatus(box.dataplane_url!, t.keyB);
    assert.equal(status, 404);
    // The same name in another tenant is another sandbox.
    const theirs = await b.createSandbox({ name: "box-a" });
    assert.notEqual(theirs.id, box.id);
    assert.equal((await theirs.run("ls kept.txt 2>&1 || echo none")).stdout.trim().endsWith("none"), true);
    await theirs.delete();
    assert.equal((await a.getSandbox("box-a")).id, box.id);
  });

  test("a missing or wrong key is a 401 with a message", async () => {
    await assert.rejects(
      client(undefined).listSandboxes(),
      (e: Error) => e instanceof LangSmithSandboxAuthenticationError && /X-Api-Key header is missing/.test(e.message),
    );
    await assert.rejects(
      client("acp_wrong").getSandbox("box-a"),
      (e: Error) => e instanceof LangSmithSandboxAuthenticationError && /not valid/.test(e.message),
    );
    const res = await fetch(`${box.dataplane_url}/execute`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    assert.equal(res.status, 401);
    assert.match((await res.json()).detail, /X-Api-Key/);
    assert.equal(await wsStatus(box.dataplane_url!, undefined), 401);
    assert.equal(await wsStatus(box.dataplane_url!, "acp_wrong"), 401);
  });

  test("bad input is a 4xx naming the field", async () => {
    await assert.rejects(
      a.createSandbox({ name: "no spaces allowed" }),
      (e: Error) => e instanceof LangSmithValidationError && /name/.test(e.message),
    );
    const call = (path: string, body: string, init: RequestInit = {}) =>
      fetch(`${url}${path}`, {
        method: "POST",
        headers: { "x-api-key": t.keyA, "content-type": "application/json" },
        body,
        ...init,
      });
    const cases: Array<[string, string, number, RegExp]> = [
      ["/v2/sandboxes/boxes", "{nope", 422, /not valid JSON/],
      ["/v2/sandboxes/boxes", JSON.stringify({ flavour: "x" }), 422, /flavour/],
      ["/v2/sandboxes/boxes", JSON.stringify({ idle_ttl_seconds: 61 }), 422, /multiple of 60/],
      ["/v2/sandboxes/boxes", JSON.stringify({ snapshot_id: "s" }), 404, /snapshot \\"s\\" not found/],
      ["/v2/sandboxes/boxes", JSON.stringify({ snapshot_name: "py", image: "x" }), 422, /snapshot's image/],
      [
        "/v2/sandboxes/snapshots",
        JSON.stringify({ name: "r", docker_image: "x", registry_id: "z" }),
        422,
        /registry_id/,
      ],
      [`/v2/sandboxes/dataplane/${box.id}/execute`, JSON.stringify({ cmd: "ls" }), 422, /command/],
      [`/v2/sandboxes/dataplane/${box.id}/upload?path=/tmp/x`, "not multipart", 422, /multipart/],
      [`/v2/sandboxes/dataplane/${box.id}/upload`, "", 422, /path/],
      ["/v2/sandboxes/dataplane/not-a-sandbox/execute", JSON.stringify({ command: "ls" }), 404, /not-a-sandbox/],
    ];
    for (const [path, body, status, message] of cases) {
      const res = await call(path, body);
      assert.equal(res.status, status, `${path} ${body}`);
      assert.match(JSON.stringify(await res.json()), message, `${path} ${body}`);
    }
  });
});

/** The HTTP status a WebSocket upgrade to `execute/ws` gets (101 when accepted). */
function wsStatus(dataplaneUrl: string, key: string | undefined): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${dataplaneUrl.replace(/^http/, "ws")}/execute/ws`, {
      headers: key ? { "x-api-key": key } : {},
    });
    ws.on("open", () => {
      ws.close();
      resolve(101);
    });
    ws.on("unexpected-response", (_req, res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    ws.on("error", reject);
  });
}
