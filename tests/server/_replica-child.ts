/**
 * Child process of the replica tests: one server replica on the fixture graphs (and `steps`)
 * on PostgreSQL (`argv[2]`), signalling over Redis when `argv[3]` is a URL ("-": over
 * PostgreSQL), with `argv[4]` workers and a run lease of `argv[5]` seconds. Prints
 * `PORT <n>` once listening; SIGTERM stops it gracefully.
 */
import process from "node:process";
import { createAgentServer } from "../../core/server/app.ts";
import { listen } from "../../core/server/host/node.ts";
import { consoleLog, silentLog } from "../../core/kernel/log.ts";
import { FIXTURES } from "./_harness.ts";

const [url, redis, workers, lease] = process.argv.slice(2);
const server = await createAgentServer({
  graphs: { ...FIXTURES, steps: async () => (await import("../fixtures/graphs/steps.ts")).graph },
  storage: { url: url! },
  redisUrl: redis && redis !== "-" ? redis : undefined,
  workers: Number(workers ?? 2),
  runLeaseSeconds: Number(lease ?? 1),
  log: process.env.AGENTCLI_TEST_LOG ? consoleLog(`replica ${process.pid}`) : silentLog,
});
const l = await listen(server, { port: 0, host: "127.0.0.1" });
process.stdout.write(`PORT ${l.port}\n`);
process.once("SIGTERM", () => void l.close().then(() => server.close({ graceMs: 2000 })).then(() => process.exit(0)));
