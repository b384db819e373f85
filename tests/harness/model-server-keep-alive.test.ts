/**
 * The scripted model server keeps an idle keep-alive connection open until the client closes
 * it, and announces no idle timeout: a client never reuses a connection the server is closing
 * (the race behind the token bench's "Connection error." at 200 runs, issue 33).
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { Agent, request } from "node:http";
import { type ModelServer, startModelServer } from "../fixtures/model-server/server.ts";

let server: ModelServer;
before(async () => void (server = await startModelServer()));
after(() => server.close());

function chat(
  agent: Agent,
  prompt: string,
): Promise<{ status: number; keepAlive?: string | string[]; reused: boolean }> {
  return new Promise((resolve, reject) => {
    const req = request(`${server.openaiBaseUrl}/chat/completions`, {
      method: "POST",
      agent,
      headers: { "content-type": "application/json", authorization: "Bearer k" },
    }, (res) => {
      res.resume();
      res.on(
        "end",
        () => resolve({ status: res.statusCode!, keepAlive: res.headers["keep-alive"], reused: req.reusedSocket }),
      );
    });
    req.on("error", reject);
    req.end(JSON.stringify({ model: "m", messages: [{ role: "user", content: prompt }] }));
  });
}

test("an idle connection outlives Node's default keep-alive timeout (5 s) and is reused", async () => {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    server.script({ text: "one" }, { text: "two" });
    const first = await chat(agent, "first");
    assert.equal(first.status, 200);
    assert.equal(first.keepAlive, undefined, "no idle timeout is announced");
    await new Promise((r) => setTimeout(r, 5_500));
    const second = await chat(agent, "second");
    assert.deepEqual(second, { status: 200, keepAlive: undefined, reused: true });
  } finally {
    agent.destroy();
  }
});
