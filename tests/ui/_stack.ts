/**
 * The usual browser-test stack: the local model server (optionally behind the slow proxy
 * that holds replies at known points), `agentcli dev` on a fixture project pointed at it, and
 * Chromium. `close()` stops them in reverse order.
 */
import { type ModelServer, startModelServer } from "../fixtures/model-server/server.ts";
import { type RunningAgent, startAgent } from "./_agent.ts";
import { launchBrowser, type TestBrowser } from "./_browser.ts";
import { type SlowProxy, startSlowProxy } from "./_slow-proxy.ts";

export interface UiStack {
  model: ModelServer;
  proxy: SlowProxy | null;
  agent: RunningAgent;
  browser: TestBrowser;
  close(): Promise<void>;
}

/** Starts the stack on `fixtures/<fixture>`; `env` overrides the model variables (OPENAI_API_KEY "sk-test", OPENAI_BASE_URL the model). */
export async function startUiStack(
  fixture: string,
  opts: { slowProxy?: boolean; env?: Record<string, string>; args?: string[] } = {},
): Promise<UiStack> {
  const model = await startModelServer();
  const proxy = opts.slowProxy ? await startSlowProxy(model.url) : null;
  const agent = await startAgent(fixture, {
    OPENAI_API_KEY: "sk-test",
    OPENAI_BASE_URL: proxy ? `${proxy.url}/openai/v1` : model.openaiBaseUrl,
    ...opts.env,
  }, opts.args);
  const browser = await launchBrowser();
  return {
    model,
    proxy,
    agent,
    browser,
    async close() {
      await browser.close();
      await agent.close();
      await proxy?.close();
      await model.close();
    },
  };
}
