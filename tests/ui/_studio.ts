/**
 * Helpers of the studio's browser tests: open `/studio` of a running agent, switch areas,
 * and take an area's documentation screenshots in both themes (`docs/ui/studio-<name>-light.png`
 * and `-dark.png`, written only with AGENTCLI_UPDATE_DOC_SCREENSHOTS=1).
 */
import type { Page } from "playwright-core";
import { Client } from "@langchain/langgraph-sdk";
import { docScreenshot } from "./_browser.ts";

export type StudioArea = "graph" | "threads" | "timeline" | "trace" | "store" | "assistants";

/** Opens the studio and waits until it has listed the assistants. */
export async function openStudio(page: Page, url: string): Promise<void> {
  await page.goto(`${url}/studio`);
  await page.getByTestId("assistant-picker").or(page.getByTestId("graph-view")).first().waitFor();
}

export async function area(page: Page, name: StudioArea): Promise<void> {
  await page.getByTestId(`area-${name}`).click();
}

/** Light and dark screenshots of what the page shows now. */
export async function shootBoth(page: Page, name: string): Promise<void> {
  const theme = await page.evaluate(() => document.documentElement.dataset.theme);
  await docScreenshot(page, `studio-${name}-${theme}`);
  await page.getByTestId("theme-toggle").click();
  const other = theme === "dark" ? "light" : "dark";
  await page.waitForFunction((t) => document.documentElement.dataset.theme === t, other);
  await docScreenshot(page, `studio-${name}-${other}`);
  await page.getByTestId("theme-toggle").click();
}

/** An SDK client of the agent (the dev bypass: no credentials). */
export function sdk(url: string): Client {
  return new Client({ apiUrl: url, apiKey: null });
}

/** Polls `check` until it returns a value (or throws after many tries, with the last error). */
export async function eventually<T>(check: () => Promise<T | null | undefined | false>, tries = 600): Promise<T> {
  let last: unknown = null;
  for (let i = 0; i < tries; i++) {
    try {
      const v = await check();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`condition not met${last ? `: ${String(last)}` : ""}`);
}
