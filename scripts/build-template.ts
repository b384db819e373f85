/**
 * Makes the executable's database template (`createPgliteTemplate`) from its inputs alone.
 * `initdb` and the migrations read the clock (the cluster's system identifier, pg_control and
 * WAL times, `now()` in rows, the tar's mtimes) and random bytes (pg_control's mock
 * authentication nonce): here the clock starts at a fixed instant and advances one microsecond
 * per reading, and random bytes come from a seeded SHA-256 stream. PGlite is single-threaded
 * WebAssembly, so the same PGlite, migrations and Node binary then give the same bytes.
 * Run by scripts/build-sea.ts in its own process (the fixed clock must not reach anything else).
 * Usage: node scripts/build-template.ts <out.tar.gz>
 */
import nodeCrypto from "node:crypto";
import { writeFileSync } from "node:fs";
import process from "node:process";

const [output] = process.argv.slice(2);
if (!output) throw new Error("usage: node scripts/build-template.ts <out.tar.gz>");

// 2000-01-01T00:00:00Z: the cluster's birth in every build.
const EPOCH_MS = 946_684_800_000;
let micros = 0;
const clock = (): number => EPOCH_MS + micros++ / 1000;
const RealDate = Date;
globalThis.Date = new Proxy(RealDate, {
  construct: (target, args, newTarget) => Reflect.construct(target, args.length ? args : [clock()], newTarget),
  apply: () => new RealDate(clock()).toString(),
  get: (target, key, receiver) => (key === "now" ? () => Math.floor(clock()) : Reflect.get(target, key, receiver)),
});
let perfMicros = 0;
performance.now = () => perfMicros++ / 1000;

const seed = nodeCrypto.createHash("sha256").update("agentcli build template").digest();
let block = 0;
function fill<T extends ArrayBufferView | null>(view: T): T {
  if (!view) return view;
  const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
  for (let offset = 0; offset < bytes.length; offset += 32) {
    const next = nodeCrypto.createHash("sha256").update(seed).update(String(block++)).digest();
    bytes.set(next.subarray(0, Math.min(32, bytes.length - offset)), offset);
  }
  return view;
}
// PGlite's emscripten runtime reads entropy through node:crypto's randomFillSync on Node, else Web Crypto.
(nodeCrypto as { randomFillSync: unknown }).randomFillSync = fill;
globalThis.crypto.getRandomValues = fill;

const { createPgliteTemplate } = await import("../core/storage/template.ts");
writeFileSync(output, await createPgliteTemplate());
process.exit(0);
