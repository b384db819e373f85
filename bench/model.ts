/**
 * The benchmark's model: the OpenAI-wire fixture server (tests/fixtures/model-server) with a
 * script that never runs dry. Run as a child process by the benches (bench/children.ts
 * `startModel`); prints its OpenAI base URL on the first line of stdout.
 * - default: "ok" for every request, at once or `--delay-ms <n>` after the request arrived;
 * - `--tokens <n> [--token-interval-ms <ms>]`: every reply streams n tokens (` t0 t1 ...`), one
 *   every `ms` (bench/tokens.ts); when each token left is served at `GET /_sends`;
 * - `--steps <n>`: a tool call (`step`, `{ "i": k }`) while the conversation holds fewer than n
 *   tool results, then "done": a run of n tool-calling steps (bench/steps.ts).
 */
import { type RecordedRequest, type ScriptedReply, startModelServer } from "../tests/fixtures/model-server/server.ts";

const arg = (name: string) => {
  const at = process.argv.indexOf(name);
  return at >= 0 ? Number(process.argv[at + 1]) || 0 : 0;
};
const delayMs = arg("--delay-ms");
const tokens = arg("--tokens");
const tokenIntervalMs = arg("--token-interval-ms");
const steps = arg("--steps");

const toolResults = (req: RecordedRequest) => req.messages.filter((m) => m.role === "tool").length;
/** The replies to top the script up with: one kind, or (with `--steps`) a tool call and a final answer. */
const kinds: ScriptedReply[] = steps
  ? [
    { when: (req) => toolResults(req) < steps, toolCalls: [{ name: "step", args: { i: 0 } }], delayMs },
    { when: (req) => toolResults(req) >= steps, text: "done", delayMs },
  ]
  : [tokens ? { tokens, tokenIntervalMs, delayMs } : { text: "ok", delayMs }];

const server = await startModelServer();
const refill = () => {
  const pending = server.pending();
  for (const kind of kinds) {
    const left = pending.filter((r) => r.when === kind.when).length;
    if (left < 2_500) server.script(...Array.from({ length: 5_000 - left }, () => ({ ...kind })));
  }
  server.requests.length = 0; // keep memory flat over long runs
};
refill();
setInterval(refill, 200);
process.stdout.write(`${server.openaiBaseUrl}\n`);
process.on("SIGTERM", () => void server.close().then(() => process.exit(0)));
