/**
 * Per-deployment settings, injected by the server into index.html as
 * `<script type="application/json" id="agentcli-settings">`. Only browser-facing values.
 * These types are the one definition of that contract: `core/server/routes/ui.ts` (which fills
 * them in) imports them from here, so the two sides cannot drift apart.
 */

/**
 * Browser-facing auth settings: the `[auth].provider` ("none" without one), the address of
 * its plugin's browser module (null: no sign-in screen, the UI sends no token) and that
 * module's settings (publishable values only, never secret keys).
 */
export interface AuthSettings {
  provider: string;
  module: string | null;
  settings: Record<string, unknown>;
}

export interface UiSettings {
  app_name: string;
  subtitle: string;
  prompts: string[];
  /** Assistant id or graph id/name the UI runs. */
  assistant_id: string;
  auth: AuthSettings;
}

const FALLBACK: UiSettings = {
  app_name: "Agent",
  subtitle: "",
  prompts: [],
  assistant_id: "agent",
  auth: { provider: "anonymous", module: null, settings: {} },
};

/** Reads the injected settings; falls back to safe defaults when absent (e.g. `vite dev`). */
export function readSettings(): UiSettings {
  const el = document.getElementById("agentcli-settings");
  if (!el?.textContent) return FALLBACK;
  try {
    const parsed = JSON.parse(el.textContent) as Partial<UiSettings>;
    return { ...FALLBACK, ...parsed, prompts: Array.isArray(parsed.prompts) ? parsed.prompts : [] };
  } catch {
    return FALLBACK;
  }
}
