/**
 * The chat UI in real Chromium against `agentcli dev` on `fixtures/basic` (anonymous auth, a
 * `researcher` subagent) with the local OpenAI-compatible model server: empty state from
 * `[frontend]`, a streamed reply, the thread in the picker with its title, todos and files
 * panels, a subagent card streaming, keyboard use, theme persistence, a phone layout, and a
 * run error shown with its message.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import type { ModelServer, RecordedRequest } from "../fixtures/model-server/server.ts";
import type { RunningAgent } from "./_agent.ts";
import { startUiStack, type UiStack } from "./_stack.ts";
import { screenshot, type TestBrowser } from "./_browser.ts";
import type { SlowProxy } from "./_slow-proxy.ts";

let model: ModelServer;
let proxy: SlowProxy;
let agent: RunningAgent;
let browser: TestBrowser;

const isSubagent = (r: RecordedRequest) => r.system.includes("researcher subagent");
const isMain = (r: RecordedRequest) => !isSubagent(r);

let stack: UiStack;
before(async () => {
  stack = await startUiStack("basic", { slowProxy: true });
  ({ model, agent, browser } = stack);
  proxy = stack.proxy!; // started: slowProxy is true
});

after(async () => {
  await stack?.close();
});

async function openApp(page: Page): Promise<void> {
  await page.goto(`${agent.url}/app`);
  await page.getByRole("textbox", { name: "Message" }).waitFor();
}

test("empty state shows the app name, subtitle and prompt chips from [frontend]", async () => {
  const page = await (await browser.context()).newPage();
  await openApp(page);
  assert.equal(await page.title(), "Scout");
  assert.equal(await page.getByTestId("app-name").textContent(), "Scout");
  const empty = page.getByTestId("empty-state");
  assert.match(await empty.textContent() ?? "", /Research, planned and delegated\./);
  assert.deepEqual(await empty.getByRole("listitem").allTextContents(), [
    "Summarize the plan",
    "Delegate some research",
  ]);
  assert.equal(
    await page.evaluate(() => document.activeElement?.getAttribute("aria-label")),
    "Message",
    "the composer has focus",
  );
  await screenshot(page, "01-empty-state");
});

test("a prompt streams a reply; the thread, todos, files and a subagent card appear", async () => {
  const context = await browser.context();
  const page = await context.newPage();
  await openApp(page);
  const final =
    "Here is the **summary** of what the researcher found:\n\n1. Alpha\n2. Beta\n\n```ts\nconst answer = 42;\n```\n";
  model.script(
    {
      when: isMain,
      toolCalls: [{
        name: "write_todos",
        args: {
          todos: [
            { content: "Outline the question", status: "completed" },
            { content: "Delegate the research", status: "in_progress" },
            { content: "Write the summary", status: "pending" },
          ],
        },
      }],
    },
    {
      when: isMain,
      toolCalls: [{ name: "write_file", args: { file_path: "/notes.md", content: "# Notes\n\n- first finding\n" } }],
    },
    {
      when: isMain,
      toolCalls: [{
        name: "task",
        args: { description: "Find two sources about streaming UIs", subagent_type: "researcher" },
      }],
    },
    {
      when: isSubagent,
      text: "Found two sources: Alpha (2024) and Beta (2025). Both recommend incremental rendering.",
    },
    { when: isMain, text: final },
  );
  // Hold the subagent's reply after its first piece, and the final answer after its first
  // piece, so the test can look at the page while the run is still going.
  const subagentGate = proxy.hold((b) => b.includes("researcher subagent"), { afterEvents: 2 });
  const finalGate = proxy.hold((b) => b.includes("Found two sources") && !b.includes("researcher subagent"), {
    afterEvents: 2,
  });
  proxy.delayMs = 20;
  const composer = page.getByRole("textbox", { name: "Message" });
  await composer.fill("Research streaming chat interfaces");
  await composer.press("Enter");

  // Mid-run: the subagent card streams its output, the panels already show the todos and the file.
  await subagentGate.reached;
  const card = page.getByTestId("subagent-card").first();
  await page.waitForFunction(
    () =>
      /Found two/.test(
        document.querySelector('[data-testid="subagent-card"] [data-testid="subagent-output"]')?.textContent ?? "",
      ),
    undefined,
    { timeout: 60_000 },
  );
  assert.equal(await card.getAttribute("data-status"), "running", "the subagent is still working");
  assert.match(await card.textContent() ?? "", /researcher/);
  assert.match(
    await card.textContent() ?? "",
    /Find two sources about streaming UIs/,
    "the card shows the subagent's task",
  );
  assert.doesNotMatch(
    await card.getByTestId("subagent-output").textContent() ?? "",
    /incremental rendering/,
    "only part of its output so far",
  );
  const todos = page.getByTestId("todos-panel");
  await todos.locator("li").nth(2).waitFor();
  assert.deepEqual(
    await todos.locator("li").evaluateAll((els) => els.map((e) => [e.textContent, e.getAttribute("data-status")])),
    [
      ["Outline the question", "completed"],
      ["Delegate the research", "in_progress"],
      ["Write the summary", "pending"],
    ],
    "the todos panel updates while the run is going",
  );
  assert.equal(await page.getByTestId("tab-files").textContent(), "Files1", "the files tab counts the new file");
  await page.getByRole("button", { name: "Stop" }).waitFor();
  await screenshot(page, "02-streaming");
  subagentGate.release();

  // The final answer streams in: part of it is on the page before the rest arrives.
  await finalGate.reached;
  const partial = await page.waitForFunction(
    () => {
      const msgs = Array.from(document.querySelectorAll('[data-testid="msg-ai"] .markdown'));
      const text = msgs.at(-1)?.textContent ?? "";
      return text.startsWith("Here is") ? text : null;
    },
    undefined,
    { timeout: 60_000 },
  );
  assert.doesNotMatch(
    String(await partial.jsonValue()),
    /const answer/,
    "part of the reply is shown before the rest arrives",
  );
  assert.equal(await card.getAttribute("data-status"), "complete");
  assert.ok(await page.getByRole("button", { name: "Stop" }).isVisible(), "the run is still going");
  await screenshot(page, "02b-reply-streaming");
  finalGate.release();
  await page.getByRole("button", { name: "Send" }).waitFor({ timeout: 60_000 });
  proxy.delayMs = 0;
  const last = page.getByTestId("msg-ai").last();
  assert.match(await last.textContent() ?? "", /Here is the summary of what the researcher found/);
  assert.equal(await last.locator("strong").first().textContent(), "summary", "markdown is rendered");
  assert.equal(await last.locator(".codeblock code").textContent(), "const answer = 42;", "code blocks are rendered");
  assert.equal(await card.getAttribute("data-status"), "complete");
  assert.match(await card.getByTestId("subagent-output").textContent() ?? "", /Found two sources/);

  // The thread is listed with a title from the first message, and is in the URL.
  const thread = page.getByTestId("thread-list").getByRole("button", { name: "Research streaming chat interfaces" });
  await thread.waitFor();
  assert.match(page.url(), /[?&]thread=[0-9a-f-]{36}/);

  // Todos and files panels.
  await page.getByTestId("tab-todos").click();
  assert.deepEqual(
    await todos.locator("li").evaluateAll((els) => els.map((e) => [e.textContent, e.getAttribute("data-status")])),
    [
      ["Outline the question", "completed"],
      ["Delegate the research", "in_progress"],
      ["Write the summary", "pending"],
    ],
  );
  await screenshot(page, "03-conversation-todos");
  await page.getByTestId("tab-files").click();
  await page.getByTestId("files-panel").getByRole("button", { name: /\/notes\.md/ }).click();
  assert.match(await page.getByTestId("files-panel").textContent() ?? "", /first finding/);
  await screenshot(page, "04-files-panel");
  await page.getByTestId("tab-subagents").click();
  assert.match(await page.getByTestId("subagents-panel").textContent() ?? "", /researcher.*Done/s);
  await screenshot(page, "05-subagents-panel");

  // A reload restores the conversation from the thread in the URL.
  await page.reload();
  await page.getByTestId("msg-ai").last().waitFor();
  assert.match(await page.getByTestId("msg-human").first().textContent() ?? "", /Research streaming chat interfaces/);
  assert.equal(model.pending().length, 0, "every scripted reply was used");
  await context.close();
});

test("Shift+Enter adds a line; Enter sends; a run error is shown with its message", async () => {
  const page = await (await browser.context()).newPage();
  await openApp(page);
  const composer = page.getByRole("textbox", { name: "Message" });
  await composer.type("first line");
  await composer.press("Shift+Enter");
  await composer.type("second line");
  assert.equal(await composer.inputValue(), "first line\nsecond line");
  assert.equal(await page.getByTestId("msg-human").count(), 0, "nothing sent yet");
  // No scripted reply: the model server answers 400, which the run reports as an error.
  await composer.press("Enter");
  assert.equal(await composer.inputValue(), "", "sending clears the box");
  const error = page.getByTestId("run-error");
  await error.waitFor({ timeout: 60_000 });
  assert.match(await error.textContent() ?? "", /no scripted reply left/);
  await screenshot(page, "06-run-error");
  assert.equal(
    await page.evaluate(() => document.activeElement?.getAttribute("aria-label")),
    "Message",
    "focus returns to the composer",
  );
});

test("keyboard: Tab reaches the controls with a visible focus ring; Enter and Space activate them", async () => {
  const page = await (await browser.context()).newPage();
  await openApp(page);
  const focused = () =>
    page.evaluate(() => {
      const el = document.activeElement as HTMLElement | null;
      if (!el || el === document.body) return null;
      const ring = (node: Element) => {
        const cs = getComputedStyle(node);
        return (cs.outlineStyle !== "none" && parseFloat(cs.outlineWidth) > 0) || cs.boxShadow !== "none";
      };
      const composer = el.closest(".composer");
      return {
        name: el.getAttribute("aria-label") || el.textContent?.trim() || el.tagName,
        testid: el.dataset.testid ?? null,
        visible: el.matches(":focus-visible") && (ring(el) || (composer !== null && ring(composer))),
      };
    });
  const seen: Array<{ name: string; testid: string | null; visible: boolean }> = [];
  for (let i = 0; i < 16; i++) {
    await page.keyboard.press("Tab");
    const f = await focused();
    if (f) seen.push(f);
  }
  const names = new Set(seen.map((f) => f.name));
  for (const control of ["New chat", "Summarize the plan", "Message", "Show activity panel"]) {
    assert.ok(names.has(control), `Tab reaches "${control}": ${[...names].join(", ")}`);
  }
  assert.deepEqual(seen.filter((f) => !f.visible).map((f) => f.name), [], "every focused control shows a focus ring");

  // Enter on the theme button switches the theme; Space on a prompt chip sends it.
  const theme = () => page.evaluate(() => document.documentElement.dataset.theme);
  for (let i = 0; i < 20 && (await focused())?.testid !== "theme-toggle"; i++) await page.keyboard.press("Shift+Tab");
  assert.equal((await focused())?.testid, "theme-toggle");
  await screenshot(page, "06b-keyboard-focus");
  await page.keyboard.press("Enter");
  assert.equal(await theme(), "dark");
  for (let i = 0; i < 20 && (await focused())?.name !== "Summarize the plan"; i++) await page.keyboard.press("Tab");
  model.script({ when: "Summarize the plan", text: "The plan, summarized." });
  await page.keyboard.press("Space");
  await page.getByText("The plan, summarized.").waitFor({ timeout: 60_000 });
  assert.match(await page.getByTestId("msg-human").first().textContent() ?? "", /Summarize the plan/);
});

test("theme follows the OS first, then the user's choice persists across reloads", async () => {
  const light = await browser.context({ colorScheme: "light" });
  const lightPage = await light.newPage();
  await openApp(lightPage);
  assert.equal(
    await lightPage.evaluate(() => document.documentElement.dataset.theme),
    "light",
    "a light OS starts light",
  );
  assert.equal(await lightPage.evaluate(() => getComputedStyle(document.body).backgroundColor), "rgb(255, 255, 255)");
  await light.close();

  const context = await browser.context({ colorScheme: "dark" });
  const page = await context.newPage();
  await openApp(page);
  const theme = () => page.evaluate(() => document.documentElement.dataset.theme);
  assert.equal(await theme(), "dark", "a dark OS starts dark");
  assert.equal(
    await page.evaluate(() => getComputedStyle(document.body).backgroundColor),
    "rgb(17, 17, 20)",
    "dark colors apply",
  );
  await page.getByTestId("theme-toggle").click();
  assert.equal(await theme(), "light");
  await page.reload();
  await page.getByRole("textbox", { name: "Message" }).waitFor();
  assert.equal(await theme(), "light", "the choice survives a reload");
  await page.getByTestId("theme-toggle").click();
  assert.equal(await theme(), "dark");
  await screenshot(page, "07-dark-theme");
  await page.reload();
  await page.getByRole("textbox", { name: "Message" }).waitFor();
  assert.equal(await theme(), "dark");
  await context.close();
});

test("phone-sized window: the sidebar is a drawer and the composer fits", async () => {
  const context = await browser.context({ phone: true });
  const page = await context.newPage();
  await openApp(page);
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(width <= 390, `no horizontal overflow (scrollWidth ${width})`);
  const box = (await page.getByRole("textbox", { name: "Message" }).boundingBox())!;
  assert.ok(
    box.x >= 0 && box.x + box.width <= 390 && box.y + box.height <= 780,
    `the composer is on screen: ${JSON.stringify(box)}`,
  );
  const inView = () =>
    page.evaluate(() => {
      const r = document.querySelector(".sidebar")!.getBoundingClientRect();
      return r.right > 0 && r.left < innerWidth;
    });
  assert.equal(await inView(), false, "the conversation list is tucked away");
  assert.equal(
    await page.getByTestId("panel-toggle").getAttribute("aria-pressed"),
    "false",
    "the activity panel starts closed",
  );
  await screenshot(page, "08-phone-empty");
  await page.getByRole("button", { name: "Conversations" }).click();
  await page.getByTestId("new-chat").waitFor({ state: "visible" });
  await page.waitForFunction(() => getComputedStyle(document.querySelector(".sidebar")!).transform === "none");
  await page.waitForFunction(() => document.getAnimations().every((a) => a.playState !== "running"));
  assert.equal(await inView(), true);
  await screenshot(page, "09-phone-drawer");
  await page.getByRole("button", { name: "Close", exact: true }).click();
  await page.waitForFunction(() => document.querySelector(".sidebar")!.getBoundingClientRect().right <= 0);

  // A conversation works at this size.
  model.script({ when: "Hello from a phone", text: "Hello, small screen." });
  await page.getByRole("textbox", { name: "Message" }).fill("Hello from a phone");
  await page.getByRole("textbox", { name: "Message" }).press("Enter");
  await page.getByText("Hello, small screen.").waitFor({ timeout: 60_000 });
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth) <= 390, "still no horizontal overflow");
  await screenshot(page, "09b-phone-conversation");
  await context.close();
});
