/**
 * The process's own output (core/kernel/redact-stdio.ts): text written to stdout, as a string or as
 * UTF-8 bytes, is redacted; bytes that are not UTF-8 text (such as the test runner's
 * serialized reports) pass through unchanged, byte for byte.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { test } from "node:test";

const SECRET = "sk-stdio-sentinel-0123456789abcdef";

const child = `
import { registerSecrets } from "./core/kernel/redact.ts";
import { redactProcessOutput } from "./core/kernel/redact-stdio.ts";
registerSecrets([${JSON.stringify(SECRET)}]);
redactProcessOutput();
process.stdout.write("string ${SECRET}\\n");
process.stdout.write(Buffer.from("bytes ${SECRET}\\n"));
process.stdout.write(Buffer.from([0xff, 0xfe, 0x00, 0x80, 0x0a]));
process.stdout.write(Buffer.from("plain\\n"));
`;

test("stdout: secrets in strings and UTF-8 bytes are redacted, other bytes pass unchanged", () => {
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", child], {
    cwd: new URL("../..", import.meta.url).pathname,
  });
  assert.equal(r.status, 0, r.stderr.toString());
  const out = r.stdout;
  assert.ok(!out.includes(Buffer.from("stdio-sentinel")), "the secret reached stdout");
  const text = out.toString("latin1");
  assert.match(text, /^string \[redacted\]\nbytes \[redacted\]\n/);
  const binary = Buffer.from([0xff, 0xfe, 0x00, 0x80, 0x0a]);
  const at = out.indexOf(binary);
  assert.ok(at > 0, "the non-UTF-8 bytes were changed");
  assert.equal(out.subarray(at + binary.length).toString(), "plain\n");
});
