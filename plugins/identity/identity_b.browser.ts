/**
 * The browser half of `identity_b` (served to the chat UI as its sign-in module; contract in
 * core/auth/browser.ts): the provider ships a browser widget (sign-in, sign-up, social
 * logins, password reset). We load its script with the publishable key, mount its sign-in
 * component into the UI's card, and send its session token as `Authorization: Bearer`.
 *
 * The widget contract (the provider's browser SDK): a global `window[widget_global]` that is
 * an instance or a constructor taking the publishable key, with `load()`, `user`,
 * `session.getToken()`, `mountSignIn(el)`, `unmountSignIn(el)`, `signOut()` and
 * `addListener(cb)`.
 *
 * Shipped as text (`browserModule`): nothing from outside this function but types and
 * browser globals.
 */
import type { AuthSnapshot, BrowserAuthFactory } from "../../core/index.ts";

export const identityBBrowser: BrowserAuthFactory = (settings) => {
  interface Widget {
    load(opts?: Record<string, unknown>): Promise<void>;
    user?: { id: string; primaryEmailAddress?: { emailAddress?: string } | null; fullName?: string | null } | null;
    session?: { getToken(): Promise<string | null> } | null;
    mountSignIn(el: HTMLElement, props?: Record<string, unknown>): void;
    unmountSignIn?(el: HTMLElement): void;
    signOut(): Promise<void>;
    addListener?(cb: () => void): void;
  }
  const publishableKey = String(settings.publishable_key ?? "");
  const scriptUrl = typeof settings.script_url === "string" && settings.script_url ? settings.script_url : null;
  const widgetGlobal = String(settings.widget_global || "Clerk");

  let snap: AuthSnapshot = { status: "loading", user: null, message: null };
  const listeners = new Set<() => void>();
  const set = (next: Partial<AuthSnapshot>) => {
    snap = { ...snap, ...next };
    for (const l of listeners) l();
  };
  let widget: Widget | null = null;

  const sync = () => {
    const u = widget?.user;
    if (u && widget?.session) {
      set({
        status: "signed_in",
        user: { id: u.id, email: u.primaryEmailAddress?.emailAddress, name: u.fullName ?? undefined },
        message: null,
      });
    } else {
      set({ status: "signed_out", user: null });
    }
  };

  const loadScript = (src: string, attrs: Record<string, string>) =>
    new Promise<void>((resolve, reject) => {
      const el = document.createElement("script");
      el.src = src;
      el.async = true;
      el.crossOrigin = "anonymous";
      for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
      el.onload = () => resolve();
      el.onerror = () =>
        reject(
          new Error(
            `Cannot load the sign-in widget from ${new URL(src, location.href).host}: the script did not load.`,
          ),
        );
      document.head.append(el);
    });

  (async () => {
    if (!scriptUrl) {
      throw new Error(
        "Cannot load the sign-in widget: no widget script URL is configured (IDENTITY_B_PUBLISHABLE_KEY is missing or malformed).",
      );
    }
    const prefix = widgetGlobal.toLowerCase();
    await loadScript(scriptUrl, {
      "data-publishable-key": publishableKey,
      [`data-${prefix}-publishable-key`]: publishableKey,
    });
    const g = (window as unknown as Record<string, unknown>)[widgetGlobal];
    if (!g) throw new Error(`Cannot start the sign-in widget: the script loaded but did not define "${widgetGlobal}".`);
    widget = (typeof g === "function" ? new (g as new (key: string) => Widget)(publishableKey) : g) as Widget;
    await widget.load();
    widget.addListener?.(sync);
    sync();
  })().catch((err: unknown) => {
    set({ status: "error", message: err instanceof Error ? err.message : String(err) });
  });

  return {
    snapshot: () => snap,
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async token() {
      return (await widget?.session?.getToken()) ?? null;
    },
    expire(message) {
      void widget?.signOut().catch(() => {});
      set({ status: "signed_out", user: null, message });
    },
    async signOut() {
      await widget?.signOut();
      sync();
    },
    mountSignIn(el) {
      const host = document.createElement("div");
      host.className = "widget-host";
      host.dataset.testid = "identity-b-widget";
      el.append(host);
      widget?.mountSignIn(host, { forceRedirectUrl: location.href });
      return () => {
        widget?.unmountSignIn?.(host);
        host.remove();
      };
    },
  };
};
