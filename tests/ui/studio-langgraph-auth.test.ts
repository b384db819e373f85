/**
 * The studio of `agentcli dev` on examples/langgraph-js (LangGraph custom auth, auth enforced) in
 * real Chromium: with no credential pasted, its calls carry LangGraph Studio's mark
 * (`x-auth-scheme: langsmith`), so the project's auth takes them as its Studio user, as
 * `langgraph dev` does for LangGraph Studio, and the studio lists the project's assistants and
 * draws a graph. A call without the mark or a credential gets 401.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { type LangGraphDev, ROOT, startLangGraphDev } from "../langgraph/_dev.ts";
import { launchBrowser, screenshot, type TestBrowser } from "./_browser.ts";
import { openStudio } from "./_studio.ts";

let dev: LangGraphDev;
let browser: TestBrowser;

before(async () => {
  dev = await startLangGraphDev(join(ROOT, "examples/langgraph-js"), { env: { AGENTCLI_DEV_AUTH_BYPASS: "0" } });
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await dev?.stop();
});

test("the studio is LangGraph Studio's user under dev with custom auth", async () => {
  const unmarked = await fetch(`${dev.url}/assistants/search`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: "{}",
  });
  assert.equal(unmarked.status, 401, "custom auth is on: a call without credentials is refused");

  const page = await (await browser.context()).newPage();
  const sent: Array<{ url: string; scheme: string | null; auth: string | null }> = [];
  page.on("request", (r) => {
    if (r.url().startsWith(`${dev.url}/assistants`)) {
      sent.push({
        url: r.url(),
        scheme: r.headers()["x-auth-scheme"] ?? null,
        auth: r.headers()["authorization"] ?? null,
      });
    }
  });
  await openStudio(page, dev.url);
  await page.getByTestId("graph-view").waitFor();
  await screenshot(page, "studio-langgraph-auth");
  assert.ok(sent.length > 0, "the studio asked for the assistants");
  assert.ok(sent.every((s) => s.scheme === "langsmith" && s.auth === null), JSON.stringify(sent));
});
