/**
 * Generative UI of examples/langgraph-js (`ui` of langgraph.json) under `agentcli dev`:
 * `POST /ui/chat` answers the HTML LangGraph's JS server answers (stylesheets, then the
 * script whose onload renders the named component into the shadow root), the files are served
 * under `/ui/chat/`, and, in Chromium, `LoadExternalComponent` of
 * `@langchain/langgraph-sdk/react-ui` (bundled into a test page with React) renders the UI
 * message a run of the chat graph pushed: it loads the component from the server and renders
 * it with the message's props and its stylesheet, and it reacts.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { build } from "esbuild";
import { type LangGraphDev, ROOT, startLangGraphDev } from "./_dev.ts";
import { launchBrowser, type TestBrowser } from "../ui/_browser.ts";

let dev: LangGraphDev;
let browser: TestBrowser | null = null;

before(async () => {
  dev = await startLangGraphDev(join(ROOT, "examples/langgraph-js"));
});
after(async () => {
  await browser?.close();
  await dev?.stop();
});

/** A page as a LangGraph.js frontend writes it: React rendering LoadExternalComponent for a UI message. */
const PAGE = `
import { createElement } from "react";
import { createRoot } from "react-dom/client";
import { Client } from "@langchain/langgraph-sdk";
import { LoadExternalComponent } from "@langchain/langgraph-sdk/react-ui";
// The example's auth.ts applies under dev too (as under langgraph dev): the page signs in as alice.
const client = new Client({ apiUrl: location.origin, apiKey: null, defaultHeaders: { authorization: "Bearer token-alice" } });
// The chat graph pushes a "greeting" UI message beside its reply.
client.runs.wait(null, "chat", { input: { messages: [{ role: "user", content: "Ada" }] } }).then((out) => {
  const message = out.ui[0];
  createRoot(document.getElementById("root")).render(
    createElement(LoadExternalComponent, { stream: { client, assistantId: "chat" }, message, namespace: "chat" }),
  );
});
`;

describe("generative UI components of examples/langgraph-js", () => {
  test("POST /ui/{graph} answers LangGraph's HTML; the files are served; bad requests are named", async () => {
    const res = await fetch(`${dev.url}/ui/chat`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/html" },
      body: JSON.stringify({ name: "greeting" }),
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /text\/html/);
    const html = await res.text();
    const css = html.match(/<link rel="stylesheet" href="([^"]+\.css)" \/>/)?.[1];
    const js = html.match(/<script src="([^"]+\/entrypoint\.js)" onload='([^']+)'><\/script>/);
    assert.ok(css && js, html);
    assert.equal(js[2], 'globalThis["__LGUI_chat"].render("greeting", "{{shadowRootId}}")');
    const script = await fetch(js[1]!);
    assert.match(script.headers.get("content-type") ?? "", /javascript/);
    assert.match(await script.text(), /__LGUI_chat/);
    assert.match(await (await fetch(css)).text(), /\.badge/);
    const missing = await fetch(`${dev.url}/ui/counter`, { method: "POST", body: '{"name":"x"}' });
    assert.equal(missing.status, 404);
    assert.deepEqual(await missing.json(), { detail: 'No UI components for "counter"' });
    const bad = await fetch(`${dev.url}/ui/chat`, { method: "POST", body: "{}" });
    assert.equal(bad.status, 422);
  });

  test("a run's UI message renders with LoadExternalComponent in Chromium, styled, and it reacts", async () => {
    const page = await build({
      stdin: { contents: PAGE, resolveDir: ROOT, loader: "tsx" },
      bundle: true,
      write: false,
      format: "iife",
      define: { "process.env.NODE_ENV": '"production"' },
      logLevel: "silent",
    });
    browser = await launchBrowser();
    const tab = await (await browser.context()).newPage();
    const errors: string[] = [];
    tab.on("pageerror", (e) => errors.push(String(e)));
    // Served at the server's origin, as a frontend beside the API would be.
    await tab.route(
      `${dev.url}/test-page`,
      (r) =>
        r.fulfill({ contentType: "text/html", body: '<div id="root"></div><script src="/test-page.js"></script>' }),
    );
    await tab.route(
      `${dev.url}/test-page.js`,
      (r) => r.fulfill({ contentType: "text/javascript", body: page.outputFiles[0]!.text }),
    );
    await tab.goto(`${dev.url}/test-page`);
    const greeting = tab.getByText("Hello, Ada!");
    await greeting.waitFor();
    const badge = tab.locator(".badge");
    assert.equal(await badge.textContent(), "0");
    assert.equal(await badge.evaluate((e) => getComputedStyle(e).color), "rgb(0, 128, 0)");
    await tab.getByRole("button", { name: /Wave/ }).click();
    await tab.locator(".badge", { hasText: "1" }).waitFor();
    // The component lives in the shadow root of LoadExternalComponent's element.
    assert.equal(await tab.evaluate(() => document.querySelector("[id^=child-shadow-]")?.shadowRoot !== null), true);
    assert.deepEqual(errors, []);
  });
});
