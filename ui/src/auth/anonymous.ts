import type { AuthDriver } from "./driver.ts";
import { SnapshotStore } from "./driver.ts";

const COOKIE = "agentcli_browser_id";

/** Reads or creates the per-browser UUID cookie (scopes the thread picker; not security). */
export function browserIdCookie(): string {
  const match = document.cookie.split("; ").find((c) => c.startsWith(`${COOKIE}=`));
  const existing = match?.slice(COOKIE.length + 1);
  if (existing && /^[0-9a-f-]{36}$/i.test(existing)) return existing;
  const id = crypto.randomUUID();
  const secure = location.protocol === "https:" ? "; Secure" : "";
  document.cookie = `${COOKIE}=${id}; Path=/; Max-Age=${60 * 60 * 24 * 400}; SameSite=Lax${secure}`;
  return id;
}

/**
 * No-auth deployments, `anonymous`, and identity plugins without a browser module: always
 * signed in, no token (API clients other than this page authenticate themselves).
 */
export function anonymousDriver(provider: string): AuthDriver {
  const browserId = browserIdCookie();
  const store = new SnapshotStore({ status: "signed_in", user: null, message: null });
  return {
    provider,
    browserId,
    snapshot: store.get,
    subscribe: store.subscribe,
    token: async () => null,
    expire: (message) => store.set({ status: "error", message }),
    signOut: async () => {},
  };
}
