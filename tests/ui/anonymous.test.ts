/**
 * Anonymous mode and connection loss in real Chromium against `agentcli dev` on
 * `fixtures/basic`: each browser gets its own id cookie, its threads carry it as
 * `metadata.browser_id`, and two browsers do not see each other's threads in the picker
 * (UX scoping, said so in the sidebar). Losing the connection mid-reply shows a banner;
 * coming back reconnects, shows the whole reply, and the next message goes through.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { Client } from "@langchain/langgraph-sdk";
import type { BrowserContext } from "playwright-core";
import type { ModelServer } from "../fixtures/model-server/server.ts";
import type { RunningAgent } from "./_agent.ts";
import { startUiStack, type UiStack } from "./_stack.ts";
import { screenshot, type TestBrowser } from "./_browser.ts";
import type { SlowProxy } from "./_slow-proxy.ts";

let model: ModelServer;
let proxy: SlowProxy;
let agent: RunningAgent;
let browser: TestBrowser;

let stack: UiStack;
before(async () => {
  stack = await startUiStack("basic", { slowProxy: true });
  ({ model, agent, browser } = stack);
  proxy = stack.proxy!; // started: slowProxy is true
});

after(async () => {
  await stack?.close();
});

async function chat(context: BrowserContext, prompt: string, reply: string) {
  const page = await context.newPage();
  await page.goto(`${agent.url}/app`);
  model.script({ when: prompt, text: reply });
  const composer = page.getByRole("textbox", { name: "Message" });
  await composer.fill(prompt);
  await composer.press("Enter");
  await page.getByText(reply).waitFor({ timeout: 60_000 });
  await page.getByTestId("thread-list").getByRole("button", { name: prompt }).waitFor();
  return page;
}

async function browserId(context: BrowserContext): Promise<string> {
  const cookie = (await context.cookies()).find((c) => c.name === "agentcli_browser_id");
  assert.ok(cookie, "the browser id cookie is set");
  return cookie.value;
}

test("two anonymous browsers each see only their own threads", async () => {
  const alice = await browser.context();
  const bob = await browser.context();
  const alicePage = await chat(alice, "Alice asks about tides", "Tides follow the moon.");
  const bobPage = await chat(bob, "Bob asks about comets", "Comets have tails.");
  const aliceId = await browserId(alice);
  const bobId = await browserId(bob);
  assert.notEqual(aliceId, bobId);

  const titles = async (page: typeof alicePage) => {
    await page.reload();
    await page.getByTestId("thread-list").getByRole("button").first().waitFor();
    return page.getByTestId("thread-list").getByRole("button").locator(".thread-title").allTextContents();
  };
  assert.deepEqual(await titles(alicePage), ["Alice asks about tides"]);
  assert.deepEqual(await titles(bobPage), ["Bob asks about comets"]);
  assert.match(await alicePage.locator(".who.anon").textContent() ?? "", /not security/);

  // The thread records the browser id and the title from the first message.
  const client = new Client({ apiUrl: agent.url, apiKey: null });
  const [thread] = await client.threads.search({ metadata: { browser_id: aliceId } });
  assert.equal(thread?.metadata?.title, "Alice asks about tides");
  await screenshot(alicePage, "17-anonymous-threads");
});

test("losing the connection mid-reply shows a banner; coming back reconnects and shows the whole reply", async () => {
  const context = await browser.context();
  const page = await context.newPage();
  await page.goto(`${agent.url}/app`);
  const composer = page.getByRole("textbox", { name: "Message" });
  const reply = "The tide turns twice a day, pulled by the moon and, less, by the sun.";
  model.script({ when: "When does the tide turn?", text: reply });
  const gate = proxy.hold((b) => b.includes("When does the tide turn?"), { afterEvents: 2 });
  await composer.fill("When does the tide turn?");
  await composer.press("Enter");
  await gate.reached;
  await page.getByText("The tide turns twice").waitFor({ timeout: 60_000 });

  await context.setOffline(true);
  const banner = page.getByTestId("offline-banner");
  await banner.waitFor();
  assert.ok(await composer.isDisabled(), "no sending while offline");
  await screenshot(page, "18-offline");
  gate.release(); // the run finishes on the server while this browser is offline

  await context.setOffline(false);
  await banner.waitFor({ state: "detached" });
  await page.getByText(reply).waitFor({ timeout: 60_000 });
  assert.equal(await page.getByTestId("run-error").count(), 0, "no error left behind");
  assert.ok(await composer.isEnabled());

  // The connection works again: the next message gets its answer.
  model.script({ when: "And the moon?", text: "The moon does most of the pulling." });
  await composer.fill("And the moon?");
  await composer.press("Enter");
  await page.getByText("The moon does most of the pulling.").waitFor({ timeout: 60_000 });
  assert.equal(await page.getByTestId("msg-human").count(), 2);
});
