/**
 * Loads the identity plugin's browser module (`settings.auth.module`, served by the agent
 * server from the plugin's `identity.ui.module`) with a dynamic import, and exposes it as the
 * UI's driver. Until the module is loaded the snapshot is `loading`; a module that does not
 * load or does not follow the contract is an `error` snapshot saying so.
 */
import type { BrowserAuthContext, BrowserAuthDriver, BrowserAuthFactory } from "../../../core/auth/browser.ts";
import type { AuthSettings } from "../settings.ts";
import type { AuthDriver } from "./driver.ts";
import { SnapshotStore } from "./driver.ts";

const METHODS = ["snapshot", "subscribe", "token", "expire", "signOut", "mountSignIn"] as const;

/** A driver that forwards to the plugin's once it has loaded; `appUrl` is the page's own address (the studio's is `/studio/`). */
export function pluginDriver(auth: AuthSettings & { module: string }, appUrl = `${location.origin}/app/`): AuthDriver {
  const pending = new SnapshotStore({ status: "loading", user: null, message: null });
  let inner: BrowserAuthDriver | null = null;
  const listeners = new Set<() => void>();
  const notify = () => { for (const l of listeners) l(); };

  const ctx: BrowserAuthContext = { provider: auth.provider, appUrl };
  import(/* @vite-ignore */ auth.module).then(
    (mod: { default?: unknown }) => {
      const factory = mod.default;
      if (typeof factory !== "function") throw new Error(`the sign-in module of "${auth.provider}" has no default export function`);
      const driver = (factory as BrowserAuthFactory)(auth.settings, ctx);
      const missing = METHODS.filter((m) => typeof (driver as unknown as Record<string, unknown>)?.[m] !== "function");
      if (missing.length) throw new Error(`the sign-in module of "${auth.provider}" returned a driver without ${missing.join(", ")}`);
      inner = driver;
      driver.subscribe(notify);
      notify();
    },
    (err: unknown) => { throw new Error(`Cannot load the sign-in module of "${auth.provider}": ${err instanceof Error ? err.message : String(err)}`); },
  ).catch((err: unknown) => {
    const message = err instanceof Error ? err.message : String(err);
    pending.set({ status: "error", message: /^Cannot /.test(message) ? message : `Cannot start sign-in: ${message}` });
  });
  pending.subscribe(notify);

  return {
    provider: auth.provider,
    browserId: null,
    snapshot: () => (inner ? inner.snapshot() : pending.get()),
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    token: async () => (inner ? inner.token() : null),
    expire: (message) => inner?.expire(message),
    signOut: async () => inner?.signOut(),
    mountSignIn: (el) => (inner ? inner.mountSignIn(el) : () => {}),
  };
}
