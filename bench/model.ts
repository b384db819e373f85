/**
 * The benchmark's model: the OpenAI-wire fixture server (tests/fixtures/model-server) with a
 * script that never runs dry ("ok" for every request: at once, or `--delay-ms <n>` after the
 * request arrived). Run as a child process by `bench/server.ts` and `bench/replicas.ts`;
 * prints its OpenAI base URL on the first line of stdout.
 */
import { startModelServer } from "../tests/fixtures/model-server/server.ts";

const at = process.argv.indexOf("--delay-ms");
const delayMs = at >= 0 ? Number(process.argv[at + 1]) || 0 : 0;
const server = await startModelServer();
const refill = () => {
  const left = server.pending().length;
  if (left < 5_000) server.script(...Array.from({ length: 10_000 - left }, () => ({ text: "ok", delayMs })));
  server.requests.length = 0; // keep memory flat over long runs
};
refill();
setInterval(refill, 200);
process.stdout.write(`${server.openaiBaseUrl}\n`);
process.on("SIGTERM", () => void server.close().then(() => process.exit(0)));
