/**
 * Child process of the crash test: serves the fixture graphs on an embedded database in
 * `argv[2]`, prints `PORT <n>` once listening.
 */
import { createAgentServer } from "../../core/server/app.ts";
import { listen } from "../../core/server/host/node.ts";
import { silentLog } from "../../core/kernel/log.ts";
import { FIXTURES } from "./_harness.ts";

const server = await createAgentServer({ graphs: FIXTURES, storage: { dataDir: process.argv[2]! }, log: silentLog });
const l = await listen(server, { port: 0 });
process.stdout.write(`PORT ${l.port}\n`);
process.once("SIGTERM", () => void l.close().then(() => server.close({ graceMs: 100 })));
