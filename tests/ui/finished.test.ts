/**
 * The chat UI's finishing touches in real Chromium against `agentcli dev` on `fixtures/basic`
 * with the local model server: the activity panel opens only when it has something in it; copy,
 * retry and edit-and-resend (a fork from the checkpoint before the message, which the model sees:
 * the old branch is gone from its prompt); a stopped run says so; the thread list keeps a busy
 * new thread on top; the favicon; the API reference at /docs. Screenshots go to docs/ui/ (light
 * and dark, 1280 px and phone width) for docs/chat-ui.md.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import type { BrowserContext, Page } from "playwright-core";
import type { ModelServer } from "../fixtures/model-server/server.ts";
import type { RunningAgent } from "./_agent.ts";
import { startUiStack, type UiStack } from "./_stack.ts";
import { docScreenshot, type TestBrowser } from "./_browser.ts";
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

async function openApp(page: Page, query = ""): Promise<void> {
  await page.goto(`${agent.url}/app${query}`);
  await page.getByRole("textbox", { name: "Message" }).waitFor();
}

async function ask(page: Page, text: string): Promise<void> {
  const composer = page.getByRole("textbox", { name: "Message" });
  await composer.fill(text);
  await composer.press("Enter");
}

const idle = (page: Page) => page.getByRole("button", { name: "Send" }).waitFor({ timeout: 60_000 });
const lastAnswer = async (page: Page) =>
  ((await page.getByTestId("msg-ai").last().locator(".markdown").textContent()) ?? "").trim();
/** The user and assistant turns of the model's last request, as text. */
const lastPrompt = () =>
  model.requests.at(-1)!.messages.filter((m) => m.role !== "tool").map((m) => `${m.role}: ${m.content}`);

async function desktop(opts: { dark?: boolean } = {}): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.context({ width: 1280, height: 800, colorScheme: opts.dark ? "dark" : "light" });
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: agent.url });
  return { context, page: await context.newPage() };
}

test("the activity panel is closed while it has nothing to show, and opens when todos appear", async () => {
  const { context, page } = await desktop();
  await openApp(page);
  assert.equal(
    await page.getByTestId("panel-toggle").getAttribute("aria-pressed"),
    "false",
    "no panel on an empty conversation",
  );
  assert.equal(await page.locator(".panel").count(), 0);
  const chat = await page.locator("main.main").boundingBox();
  assert.ok(
    chat && chat.width >= 1280 - 272 - 1,
    `the chat has the whole width beside the sidebar (${chat?.width} px)`,
  );
  await docScreenshot(page, "chat-empty-1280-light");

  model.script({ when: "Plain question", text: "A plain answer, no todos." });
  await ask(page, "Plain question");
  await idle(page);
  await page.getByText("A plain answer, no todos.").waitFor();
  assert.equal(await page.locator(".panel").count(), 0, "an answer without todos, files or subagents opens no panel");

  model.script(
    {
      when: "Plan a trip",
      toolCalls: [{
        name: "write_todos",
        args: {
          todos: [
            { content: "Pick the dates", status: "completed" },
            { content: "Book the train", status: "in_progress" },
            { content: "Pack", status: "pending" },
          ],
        },
      }],
    },
    { when: "Plan a trip", text: "The trip is planned: dates picked, the train next." },
  );
  await ask(page, "Plan a trip");
  await page.getByTestId("todos-panel").locator("li").nth(2).waitFor({ timeout: 60_000 });
  assert.equal(
    await page.getByTestId("panel-toggle").getAttribute("aria-pressed"),
    "true",
    "todos open the panel by themselves",
  );
  await idle(page);
  await page.mouse.move(0, 0);
  await docScreenshot(page, "chat-todos-1280-light");

  // The user's choice wins: closed, it stays closed for this conversation.
  await page.getByRole("button", { name: "Close panel" }).click();
  assert.equal(await page.locator(".panel").count(), 0);
  await page.reload();
  await page.getByTestId("msg-ai").last().waitFor();
  await page.getByTestId("todos-panel").waitFor({ timeout: 60_000 });
  assert.equal(
    await page.getByTestId("panel-toggle").getAttribute("aria-pressed"),
    "true",
    "a conversation with todos opens with its panel",
  );
  // A new chat starts without it.
  await page.getByTestId("new-chat").click();
  await page.getByTestId("empty-state").waitFor();
  assert.equal(await page.locator(".panel").count(), 0, "a new chat has an empty panel: closed");
  await context.close();
});

test("copy puts a message on the clipboard; retry runs the last question again on a new branch", async () => {
  const { context, page } = await desktop();
  await openApp(page);
  model.script({ when: "Name a color", text: "**Blue**, first try." });
  await ask(page, "Name a color");
  await idle(page);
  await page.getByText("first try").waitFor();

  await page.getByTestId("msg-human").first().hover();
  await page.getByTestId("msg-human").first().getByRole("button", { name: "Copy message" }).click();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), "Name a color");
  const answer = page.getByTestId("msg-ai").last();
  await answer.getByRole("button", { name: "Copy message" }).click();
  assert.equal(
    await page.evaluate(() => navigator.clipboard.readText()),
    "**Blue**, first try.",
    "the answer is copied as its markdown",
  );
  await answer.getByRole("button", { name: "Copied" }).waitFor();
  assert.equal(
    await page.getByRole("button", { name: "Retry" }).count(),
    1,
    "retry is offered on the last answer only",
  );

  model.script({ when: "Name a color", text: "Green, second try." });
  await page.getByRole("button", { name: "Retry" }).click();
  await page.getByText("Green, second try.").waitFor({ timeout: 60_000 });
  await idle(page);
  assert.deepEqual(lastPrompt(), ["user: Name a color"], "the model saw the question once, without the first answer");
  assert.deepEqual(await page.getByTestId("msg-human").allTextContents(), ["Name a color"]);
  assert.equal(await page.getByTestId("msg-ai").count(), 1, "the first answer is replaced");
  assert.equal(await lastAnswer(page), "Green, second try.");
  await page.reload();
  await page.getByText("Green, second try.").waitFor({ timeout: 60_000 });
  assert.equal(await page.getByTestId("msg-ai").count(), 1, "the thread's state is the new branch");
  await context.close();
});

test("edit-and-resend forks from the checkpoint before the message: later turns are dropped", async () => {
  const { context, page } = await desktop({ dark: true });
  await openApp(page);
  model.script({ when: "First question", text: "First answer." });
  await ask(page, "First question");
  await page.getByText("First answer.").waitFor({ timeout: 60_000 });
  await idle(page);
  model.script({ when: "Second question", text: "Second answer." });
  await ask(page, "Second question");
  await page.getByText("Second answer.").waitFor({ timeout: 60_000 });
  await idle(page);

  const first = page.getByTestId("msg-human").first();
  await first.hover();
  await first.getByRole("button", { name: "Edit message" }).click();
  const editor = page.getByRole("textbox", { name: "Edit message" });
  assert.equal(await editor.inputValue(), "First question");
  assert.equal(
    await page.evaluate(() => document.activeElement?.getAttribute("aria-label")),
    "Edit message",
    "the editor has focus",
  );
  await editor.fill("First question, rephrased");
  await docScreenshot(page, "chat-edit-1280-dark");
  // Escape cancels without sending.
  await editor.press("Escape");
  assert.equal(await page.getByTestId("msg-editor").count(), 0);
  assert.equal(await page.getByTestId("msg-human").count(), 2);

  await first.hover();
  await first.getByRole("button", { name: "Edit message" }).click();
  await page.getByRole("textbox", { name: "Edit message" }).fill("First question, rephrased");
  model.script({ when: "rephrased", text: "An answer to the rephrased question." });
  await page.getByRole("textbox", { name: "Edit message" }).press("Enter");
  await page.getByText("An answer to the rephrased question.").waitFor({ timeout: 60_000 });
  await idle(page);
  assert.deepEqual(lastPrompt(), ["user: First question, rephrased"], "the model saw only the edited message");
  assert.deepEqual(await page.getByTestId("msg-human").allTextContents(), ["First question, rephrased"]);
  assert.equal(await page.getByTestId("msg-ai").count(), 1);
  await page.mouse.move(0, 0);
  await docScreenshot(page, "chat-conversation-1280-dark");
  await context.close();
});

test("after an error, Retry in the notice runs the question again", async () => {
  const { context, page } = await desktop();
  await openApp(page);
  // No scripted reply: the model server answers 400, the run fails.
  await ask(page, "Is anyone there?");
  const error = page.getByTestId("run-error");
  await error.waitFor({ timeout: 60_000 });
  model.script({ when: "Is anyone there?", text: "Yes, here now." });
  await error.getByRole("button", { name: "Retry" }).click();
  await page.getByText("Yes, here now.").waitFor({ timeout: 60_000 });
  await idle(page);
  assert.equal(await page.getByTestId("run-error").count(), 0, "the error is gone");
  assert.deepEqual(
    await page.getByTestId("msg-human").allTextContents(),
    ["Is anyone there?"],
    "the question is not repeated",
  );
  assert.deepEqual(lastPrompt(), ["user: Is anyone there?"]);
  await context.close();
});

test("Stop: the run says it was stopped (not that the agent waits for input), also after a reload", async () => {
  const { context, page } = await desktop();
  await openApp(page);
  model.script({
    when: "Write a long essay",
    text: "Once upon a time, there was a very long essay that nobody finished reading.",
  });
  const gate = proxy.hold((b) => b.includes("Write a long essay"), { afterEvents: 2 });
  await ask(page, "Write a long essay");
  await gate.reached;
  await page.getByRole("button", { name: "Stop" }).click();
  const stopped = page.getByTestId("run-stopped");
  await stopped.waitFor({ timeout: 60_000 });
  assert.match(await stopped.textContent() ?? "", /You stopped this reply\./);
  assert.equal(await page.getByText("The agent is waiting for input").count(), 0);
  await page.mouse.move(0, 0);
  await docScreenshot(page, "chat-stopped-1280-light");
  gate.release();
  await page.reload();
  await page.getByTestId("msg-human").first().waitFor({ timeout: 60_000 });
  await stopped.waitFor({ timeout: 60_000 });
  assert.match(await stopped.textContent() ?? "", /stopped before it finished/);
  assert.equal(await page.getByText("The agent is waiting for input").count(), 0);
  // Retry from the notice runs the question again.
  model.script({ when: "Write a long essay", text: "A short essay, this time finished." });
  await stopped.getByRole("button", { name: "Retry" }).click();
  await page.getByText("A short essay, this time finished.").waitFor({ timeout: 60_000 });
  await idle(page);
  assert.equal(await page.getByTestId("run-stopped").count(), 0, "the notice is gone");
  assert.deepEqual(await page.getByTestId("msg-human").allTextContents(), ["Write a long essay"]);
  await context.close();
});

test("the thread list: a new thread whose run is busy stays on top of one updated after it", async () => {
  const { context, page: first } = await desktop();
  await openApp(first);
  model.script(
    {
      when: "Older thread",
      toolCalls: [{ name: "write_todos", args: { todos: [{ content: "Keep going", status: "in_progress" }] } }],
    },
    { when: "Older thread", text: "The older thread is done." },
  );
  // The older thread's run is held after its first model call; it will write later.
  const olderGate = proxy.hold((b) => b.includes("Older thread") && b.includes("Keep going"), { afterEvents: 1 });
  await ask(first, "Older thread");
  await olderGate.reached;

  // A second tab (same browser, same anonymous id) starts a new thread whose run is held.
  const second = await context.newPage();
  await openApp(second);
  model.script({ when: "Newer thread", text: "The newer thread is done." });
  const newerGate = proxy.hold((b) => b.includes("Newer thread"), { afterEvents: 1 });
  await ask(second, "Newer thread");
  await newerGate.reached;

  // The older thread finishes: its updated_at is now later than the newer thread's.
  olderGate.release();
  await first.getByText("The older thread is done.").waitFor({ timeout: 60_000 });
  await second.reload();
  const titles = () => second.getByTestId("thread-list").locator(".thread-title").allTextContents();
  await second.getByTestId("thread-list").getByRole("button", { name: "Older thread" }).waitFor({ timeout: 60_000 });
  assert.deepEqual((await titles()).slice(0, 2), ["Newer thread", "Older thread"], "the busy new thread is on top");
  newerGate.release();
  await second.getByText("The newer thread is done.").waitFor({ timeout: 60_000 });
  await idle(second);
  assert.deepEqual((await titles()).slice(0, 2), ["Newer thread", "Older thread"], "and stays there when done");
  await context.close();
});

test("favicon: /app links it and loads without a console error; /favicon.ico answers", async () => {
  const { context, page } = await desktop();
  const problems: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(m.text());
  });
  page.on("response", (r) => {
    if (r.status() >= 400) problems.push(`${r.status()} ${r.url()}`);
  });
  await openApp(page);
  const href = await page.locator('link[rel="icon"]').getAttribute("href");
  assert.equal(href, "/app/favicon.svg");
  const icon = await page.request.get(`${agent.url}${href}`);
  assert.equal(icon.headers()["content-type"], "image/svg+xml");
  const ico = await page.request.get(`${agent.url}/favicon.ico`);
  assert.equal(ico.status(), 200);
  await page.goto(`${agent.url}/favicon.ico`);
  await openApp(page);
  assert.deepEqual(problems, []);
  await context.close();
});

test("/docs renders the API reference of /openapi.json, with no request leaving the server", async () => {
  const { context, page } = await desktop();
  const hosts = new Set<string>();
  page.on("request", (r) => hosts.add(new URL(r.url()).origin));
  await page.goto(`${agent.url}/docs`);
  await page.locator(".opblock").first().waitFor({ timeout: 60_000 });
  const text = await page.locator("#swagger-ui").textContent() ?? "";
  assert.match(text, /agentcli Agent API/);
  assert.match(text, /\/threads\/search/);
  assert.match(text, /Authorize/, "credentials can be given for the calls it makes");
  assert.deepEqual([...hosts].filter((h) => h !== agent.url && h !== "null"), [], "no CDN");
  await docScreenshot(page, "api-reference");
  await context.close();
});

test("phone width, light and dark: a conversation with its message actions fits", async () => {
  for (const scheme of ["light", "dark"] as const) {
    const context = await browser.context({ phone: true, colorScheme: scheme });
    const page = await context.newPage();
    await openApp(page);
    model.script({
      when: `Hello in ${scheme}`,
      text: `Hello, small ${scheme} screen. Here is a list:\n\n- one\n- two`,
    });
    await ask(page, `Hello in ${scheme}`);
    await page.getByText(`Hello, small ${scheme} screen.`).waitFor({ timeout: 60_000 });
    await idle(page);
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth) <= 390, "no horizontal overflow");
    assert.ok(
      await page.getByTestId("msg-ai").last().getByRole("button", { name: "Retry" }).isVisible(),
      "actions show without hover on a touch screen",
    );
    assert.equal(await page.locator(".panel").count(), 0, "no panel over the chat");
    await docScreenshot(page, `chat-phone-${scheme}`);
    await context.close();
  }
});
