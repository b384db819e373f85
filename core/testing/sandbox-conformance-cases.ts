/**
 * The cases of the sandbox conformance suite (./sandbox-conformance.ts), by what they check:
 * the tools ({@link toolCases}), isolation ({@link isolationCases}) and a sandbox's life
 * ({@link lifecycleCases}). They register in this order inside the suite's `describe`; later
 * cases read files earlier ones wrote in `threadA`'s sandbox (the restart reads `turns.txt`).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { isSandboxNotFound } from "../kernel/index.ts";
import { CANARY, type ConformanceKit, exec } from "./sandbox-conformance-kit.ts";

/** `execute` and the file tools on one sandbox: results, failures, binary files, skills, a timeout. */
export function toolCases(kit: ConformanceKit): void {
  const { wd } = kit;
  test("execute: output and exit codes; a failing command is a result, not an error", async () => {
    const [ok, failed] = await kit.turn(kit.main, kit.threadA, [
      exec("echo hello sandbox"),
      exec("echo oops >&2; exit 3"),
    ]);
    assert.match(ok, /hello sandbox/);
    assert.match(ok, /\[Command succeeded with exit code 0\]/);
    assert.match(failed, /oops/);
    assert.match(failed, /\[Command failed with exit code 3\]/);
  });

  test("file tools and execute act on the same sandbox filesystem", async () => {
    const file = `${wd}/notes.txt`;
    // At most four tool calls a turn: each one is several graph steps (recursion limit 25).
    const [written, catted, read, edited] = await kit.turn(kit.main, kit.threadA, [
      { name: "write_file", args: { file_path: file, content: "first line\n" } },
      exec(`cat ${file} && echo "second line" >> ${file}`),
      { name: "read_file", args: { file_path: file } },
      { name: "edit_file", args: { file_path: file, old_string: "first", new_string: "1st" } },
    ]);
    const [after, listed, found, grepped] = await kit.turn(kit.main, kit.threadA, [
      exec(`cat ${file}`),
      { name: "ls", args: { path: wd } },
      { name: "glob", args: { pattern: "*.txt", path: wd } },
      { name: "grep", args: { pattern: "second", path: wd } },
    ]);
    assert.match(written, /notes\.txt/);
    assert.match(catted, /first line/);
    assert.match(read, /first line[\s\S]*second line/);
    assert.match(edited, /notes\.txt/);
    assert.match(after, /1st line\nsecond line/);
    assert.match(listed, /notes\.txt/);
    assert.match(found, /notes\.txt/);
    assert.match(grepped, /notes\.txt/);
  });

  test("bad input: a path that does not exist is a clear tool result and the run goes on", async () => {
    const [read, catted] = await kit.turn(kit.main, kit.threadA, [
      { name: "read_file", args: { file_path: `${wd}/no/such/file.txt` } },
      exec(`cat ${wd}/no/such/file.txt`),
    ]);
    assert.match(read, /not found|No such file/i);
    assert.match(catted, /No such file/);
    assert.match(catted, /exit code [1-9]/);
  });

  test("binary upload and download through the contract", async () => {
    const [row] = await kit.sandboxRow(kit.main, `thread:${kit.threadA}`);
    const sandbox = await kit.attach(kit.main, `thread:${kit.threadA}`, row!.sandbox_id);
    const bytes = new Uint8Array(256).map((_, i) => i);
    const up = await sandbox.uploadFiles([{ path: `${wd}/bin/all-bytes.bin`, content: bytes }]);
    assert.deepEqual(up, [{ path: `${wd}/bin/all-bytes.bin`, error: null }]);
    const size = await sandbox.execute(`wc -c < ${wd}/bin/all-bytes.bin`);
    assert.equal(size.output.trim(), "256");
    const [down, missing] = await sandbox.downloadFiles([`${wd}/bin/all-bytes.bin`, `${wd}/bin/missing.bin`]);
    assert.deepEqual([...down!.content!], [...bytes]);
    assert.equal(down!.error, null);
    assert.equal(missing!.content, null);
    assert.equal(missing!.error, "file_not_found");
    await sandbox.close?.();
  });

  test("skills are in the sandbox: a skill's script runs with execute", async () => {
    const [out] = await kit.turn(kit.main, kit.threadA, [exec("bash /skills/hello/scripts/hello.sh world")]);
    assert.match(out, /hello from the skill, world/);
  });

  test("timeout: a hung command is killed at its timeout and the run goes on", async () => {
    const started = Date.now();
    const [hung, next] = await kit.turn(kit.main, kit.threadA, [exec("sleep 600", 2), exec("echo still here")]);
    assert.match(hung, /\[Command timed out after 2 s and was killed/);
    assert.match(next, /still here/);
    assert.ok(Date.now() - started < 300_000, "the hung command did not hold the run");
  });
}

/** What a sandbox cannot see: another thread's files, the server's environment, the network, this machine. */
export function isolationCases(kit: ConformanceKit): void {
  const { wd, opts, canary } = kit;
  test("thread scope: files persist across turns and are separate between threads", async () => {
    const { main, threadA } = kit;
    await kit.turn(main, threadA, [exec(`echo kept > ${wd}/turns.txt`)]);
    const [again] = await kit.turn(main, threadA, [exec(`cat ${wd}/turns.txt`)]);
    assert.match(again, /kept/);
    const threadB = await kit.newThread(main);
    const [other] = await kit.turn(main, threadB, [exec(`cat ${wd}/turns.txt`)]);
    assert.match(other, /No such file/);
    const [a] = await kit.sandboxRow(main, `thread:${threadA}`);
    const [b] = await kit.sandboxRow(main, `thread:${threadB}`);
    assert.notEqual(a!.sandbox_id, b!.sandbox_id);
  });

  test("isolation: no server environment, no other sandbox" + (opts.network ? "" : ", no network"), async () => {
    const { main, threadA } = kit;
    const threadB = await kit.newThread(main);
    await kit.turn(main, threadB, [exec(`echo secret-of-b > ${wd}/b-only.txt`)]);
    const port = main.host.listening.port;
    const [env, procs, net, others] = await kit.turn(main, threadA, [
      exec(`env; echo "canary:\${${CANARY}:-absent}"`),
      exec(`cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c ${canary} || true`),
      exec(`timeout 5 bash -c 'exec 3<>/dev/tcp/127.0.0.1/${port}' && echo connected || echo refused`),
      exec(`cat ${wd}/b-only.txt; find / -name b-only.txt 2>/dev/null | head -3; echo end`),
    ]);
    assert.match(env, /canary:absent/);
    assert.doesNotMatch(env, new RegExp(canary));
    assert.doesNotMatch(env, /OPENAI_API_KEY/);
    assert.match(procs, /^0\b/m);
    if (!opts.network) assert.match(net, /refused/);
    assert.doesNotMatch(others, /secret-of-b/);
    assert.doesNotMatch(others, /b-only\.txt\n/);
  });

  if (kit.hostIsolation) {
    test("isolation from this machine: the data dir, the project and its .env are invisible", async () => {
      const { main, root } = kit;
      const projectDir = join(root, "project-thread");
      const [out] = await kit.turn(main, kit.threadA, [
        exec(
          `ls ${main.dataDir} 2>&1; cat ${projectDir}/.env 2>&1; ls ${main.dataDir}-sandboxes 2>&1; ls ${root} 2>&1; echo end`,
        ),
      ]);
      assert.doesNotMatch(out, new RegExp(canary));
      assert.doesNotMatch(out, /PG_VERSION|local-[0-9a-f]{8}/);
      assert.match(out, /No such file or directory/);
    });
  }
}

/** A sandbox's life: kept across a restart, recreated when it vanished, deleted with its thread, shared by scope. */
export function lifecycleCases(kit: ConformanceKit): void {
  const { wd } = kit;
  test("persistence across a server restart: the thread gets the same sandbox back", async () => {
    const [before] = await kit.sandboxRow(kit.main, `thread:${kit.threadA}`);
    const dataDir = kit.main.dataDir;
    await kit.main.stop();
    kit.main = await kit.start("thread", { dataDir });
    const [out] = await kit.turn(kit.main, kit.threadA, [exec(`cat ${wd}/turns.txt`)]);
    assert.match(out, /kept/);
    const [afterRestart] = await kit.sandboxRow(kit.main, `thread:${kit.threadA}`);
    assert.equal(afterRestart!.sandbox_id, before!.sandbox_id);
  });

  test("a sandbox that vanished at the provider: recreated, and the result says its files are gone", async () => {
    const { main } = kit;
    const threadV = await kit.newThread(main);
    await kit.turn(main, threadV, [exec(`echo soon-gone > ${wd}/v.txt`)]);
    const [row] = await kit.sandboxRow(main, `thread:${threadV}`);
    await (await kit.attach(main, `thread:${threadV}`, row!.sandbox_id)).delete();
    const [out] = await kit.turn(main, threadV, [exec(`cat ${wd}/v.txt; echo new-sandbox`)]);
    assert.match(out, /no longer existed[\s\S]*files written to the old sandbox are gone/);
    assert.match(out, /new-sandbox/);
    const [now] = await kit.sandboxRow(main, `thread:${threadV}`);
    assert.notEqual(now!.sandbox_id, row!.sandbox_id);
  });

  test("deleting a thread deletes its sandbox", async () => {
    const { main } = kit;
    const threadD = await kit.newThread(main);
    await kit.turn(main, threadD, [exec("echo x")]);
    const [row] = await kit.sandboxRow(main, `thread:${threadD}`);
    await main.client.threads.delete(threadD);
    assert.deepEqual(await kit.sandboxRow(main, `thread:${threadD}`), []);
    await assert.rejects(async () => {
      const s = await kit.attach(main, `thread:${threadD}`, row!.sandbox_id);
      await s.execute("true");
    }, (err: unknown) => isSandboxNotFound(err));
  });

  test("assistant scope: one sandbox shared by the assistant's threads", async () => {
    const shared = await kit.start("assistant");
    const [t1, t2] = [await kit.newThread(shared), await kit.newThread(shared)];
    await kit.turn(shared, t1, [exec(`echo shared-file > ${wd}/shared.txt`)]);
    const [out] = await kit.turn(shared, t2, [exec(`cat ${wd}/shared.txt`)]);
    assert.match(out, /shared-file/);
    const rows = await shared.host.server.storage.sandboxes.list();
    assert.equal(rows.length, 1);
    assert.match(rows[0]!.scope_key, /^assistant:/);
    await shared.stop();
  });
}
