/**
 * Real Chromium for the UI tests (playwright-core driving /usr/bin/chromium, headless, a fresh
 * profile per launch) and screenshots saved under `artifacts/ui-screenshots/` (or, for the
 * ones the user documentation shows, `docs/ui/`).
 */
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";

export const SCREENSHOTS = fileURLToPath(new URL("../../artifacts/ui-screenshots/", import.meta.url));
/** Screenshots the documentation shows (docs/chat-ui.md). */
export const DOC_SCREENSHOTS = fileURLToPath(new URL("../../docs/ui/", import.meta.url));
const CHROMIUM = process.env.AGENTCLI_CHROMIUM ?? "/usr/bin/chromium";

export interface ContextOptions {
  phone?: boolean;
  /** What `prefers-color-scheme` answers (default light). */
  colorScheme?: "light" | "dark";
  /** Accept self-signed certificates (local HTTPS fixtures such as identity_b's frontend API). */
  ignoreHTTPSErrors?: boolean;
  /** A desktop window this wide (default 1360) and tall (default 860). */
  width?: number;
  height?: number;
}

export interface TestBrowser {
  browser: Browser;
  /** A new isolated context (cookies, storage) with a desktop or phone viewport. */
  context(opts?: ContextOptions): Promise<BrowserContext>;
  close(): Promise<void>;
}

export async function launchBrowser(): Promise<TestBrowser> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
    // Playwright gives every launch a fresh temporary profile (its own --user-data-dir).
  });
  const contexts: BrowserContext[] = [];
  return {
    browser,
    async context(opts = {}) {
      const common = {
        colorScheme: opts.colorScheme ?? "light",
        ignoreHTTPSErrors: opts.ignoreHTTPSErrors ?? false,
      } as const;
      const ctx = await browser.newContext(
        opts.phone
          ? { viewport: { width: 390, height: 780 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true, ...common }
          : { viewport: { width: opts.width ?? 1360, height: opts.height ?? 860 }, ...common },
      );
      contexts.push(ctx);
      return ctx;
    },
    async close() {
      for (const c of contexts.reverse()) await c.close().catch(() => {});
      await browser.close().catch(() => {});
    },
  };
}

/** Saves a full-window screenshot as `artifacts/ui-screenshots/<name>.png`. */
export async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`) });
}

/**
 * A screenshot for the user documentation: saved with the others in `artifacts/ui-screenshots/`,
 * and as `docs/ui/<name>.png` only when `AGENTCLI_UPDATE_DOC_SCREENSHOTS=1` (so a test run
 * leaves the committed pictures as they are).
 */
export async function docScreenshot(page: Page, name: string): Promise<void> {
  await screenshot(page, `docs-${name}`);
  if (process.env.AGENTCLI_UPDATE_DOC_SCREENSHOTS !== "1") return;
  await mkdir(DOC_SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(DOC_SCREENSHOTS, `${name}.png`) });
}
