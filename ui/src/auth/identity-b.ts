/**
 * `identity_b`: the provider ships a browser widget (sign-in, sign-up, social logins,
 * password reset). We load its script with the publishable key, mount its sign-in
 * component, and send its session token as `Authorization: Bearer`.
 *
 * The widget contract (the provider's browser SDK): a global `window[widget_global]` that is
 * an instance or a constructor taking the publishable key, with `load()`, `user`,
 * `session.getToken()`, `mountSignIn(el)`, `unmountSignIn(el)`, `signOut()` and
 * `addListener(cb)`.
 */
import type { AuthDriver } from "./driver.ts";
import { SnapshotStore } from "./driver.ts";

interface Widget {
  load(opts?: Record<string, unknown>): Promise<void>;
  user?: { id: string; primaryEmailAddress?: { emailAddress?: string } | null; fullName?: string | null } | null;
  session?: { getToken(): Promise<string | null> } | null;
  mountSignIn(el: HTMLElement, props?: Record<string, unknown>): void;
  unmountSignIn?(el: HTMLElement): void;
  signOut(): Promise<void>;
  addListener?(cb: () => void): void;
}

export interface IdentityBDriver extends AuthDriver {
  readonly provider: "identity_b";
  mountSignIn(el: HTMLElement): () => void;
}

function loadScript(src: string, attrs: Record<string, string>): Promise<void> {
  return new Promise((resolve, reject) => {
    const el = document.createElement("script");
    el.src = src;
    el.async = true;
    el.crossOrigin = "anonymous";
    for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
    el.onload = () => resolve();
    el.onerror = () => reject(new Error(`Cannot load the sign-in widget from ${new URL(src, location.href).host}: the script did not load.`));
    document.head.append(el);
  });
}

/** Creates the `identity_b` driver; the widget script loads immediately. */
export function identityBDriver(opts: { publishableKey: string; scriptUrl: string | null; widgetGlobal: string }): IdentityBDriver {
  const store = new SnapshotStore({ status: "loading", user: null, message: null });
  let widget: Widget | null = null;

  const sync = () => {
    const u = widget?.user;
    if (u && widget?.session) {
      store.set({ status: "signed_in", user: { id: u.id, email: u.primaryEmailAddress?.emailAddress, name: u.fullName ?? undefined }, message: null });
    } else {
      store.set({ status: "signed_out", user: null });
    }
  };

  (async () => {
    if (!opts.scriptUrl) throw new Error("Cannot load the sign-in widget: no widget script URL is configured (IDENTITY_B_PUBLISHABLE_KEY is missing or malformed).");
    const prefix = opts.widgetGlobal.toLowerCase();
    await loadScript(opts.scriptUrl, { "data-publishable-key": opts.publishableKey, [`data-${prefix}-publishable-key`]: opts.publishableKey });
    const g = (window as unknown as Record<string, unknown>)[opts.widgetGlobal];
    if (!g) throw new Error(`Cannot start the sign-in widget: the script loaded but did not define "${opts.widgetGlobal}".`);
    widget = (typeof g === "function" ? new (g as new (key: string) => Widget)(opts.publishableKey) : g) as Widget;
    await widget.load();
    widget.addListener?.(sync);
    sync();
  })().catch((err: unknown) => {
    store.set({ status: "error", message: err instanceof Error ? err.message : String(err) });
  });

  return {
    provider: "identity_b",
    browserId: null,
    snapshot: store.get,
    subscribe: store.subscribe,
    async token() {
      return (await widget?.session?.getToken()) ?? null;
    },
    expire(message) {
      void widget?.signOut().catch(() => {});
      store.set({ status: "signed_out", user: null, message });
    },
    async signOut() {
      await widget?.signOut();
      sync();
    },
    mountSignIn(el) {
      widget?.mountSignIn(el, { forceRedirectUrl: location.href });
      return () => widget?.unmountSignIn?.(el);
    },
  };
}
