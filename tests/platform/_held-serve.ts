/**
 * `agentcli` as the local listener's revision processes run it, held at a known point for
 * tests: with `AGENTCLI_TEST_HOLD=<file>` in its environment (a deployment secret) it writes
 * `<file>.waiting` and starts agentcli only once `<file>` exists, so the revision cannot pass
 * its health check before the test says so. Without it, it is plain agentcli.
 */
import { existsSync, writeFileSync } from "node:fs";
import process from "node:process";

const hold = process.env.AGENTCLI_TEST_HOLD;
if (hold) {
  writeFileSync(`${hold}.waiting`, String(process.pid));
  while (!existsSync(hold)) await new Promise((r) => setTimeout(r, 50));
}
await import("../../bin/agentcli.js");
