/**
 * `identity_a`: email/password against its GoTrue-style auth API (`/auth/v1/...`, header
 * `apikey: <publishable key>`). The session lives in localStorage and is refreshed with its
 * refresh token shortly before it expires. Links from emails (password recovery, sign-up
 * confirmation) come back to `/app/#access_token=...&type=...`.
 */
import type { AuthDriver, SignedInUser } from "./driver.ts";
import { SnapshotStore } from "./driver.ts";

const STORAGE_KEY = "agentcli.identity_a.session";

interface Session {
  access_token: string;
  refresh_token: string;
  /** Seconds since the epoch. */
  expires_at: number;
  user: SignedInUser;
}

export interface IdentityADriver extends AuthDriver {
  readonly provider: "identity_a";
  signIn(email: string, password: string): Promise<void>;
  /** Resolves "signed_in", or "confirm" when the provider emails a confirmation link first. */
  signUp(email: string, password: string): Promise<"signed_in" | "confirm">;
  recover(email: string): Promise<void>;
  /** After a recovery link: set the new password for the signed-in user. */
  updatePassword(password: string): Promise<void>;
  /** True while the user arrived from a recovery link and must choose a new password. */
  readonly recovering: boolean;
}

/** The provider's error bodies vary by endpoint; this finds the human message. */
async function errorMessage(res: Response): Promise<string> {
  try {
    const body = (await res.json()) as Record<string, unknown>;
    const msg = body.error_description ?? body.msg ?? body.message ?? body.error;
    if (typeof msg === "string" && msg) return msg;
  } catch { /* not JSON */ }
  return `The sign-in service answered ${res.status}.`;
}

function toSession(body: Record<string, unknown>): Session | null {
  if (typeof body.access_token !== "string") return null;
  const user = (body.user ?? {}) as { id?: string; email?: string; user_metadata?: { full_name?: string } };
  const expiresIn = typeof body.expires_in === "number" ? body.expires_in : 3600;
  return {
    access_token: body.access_token,
    refresh_token: typeof body.refresh_token === "string" ? body.refresh_token : "",
    expires_at: typeof body.expires_at === "number" ? body.expires_at : Math.floor(Date.now() / 1000) + expiresIn,
    user: { id: user.id ?? "", email: user.email, name: user.user_metadata?.full_name },
  };
}

function loadSession(): Session | null {
  try {
    const raw = localStorage.getItem(STORAGE_KEY);
    return raw ? (JSON.parse(raw) as Session) : null;
  } catch {
    return null;
  }
}

/** Creates the `identity_a` driver for the given auth API base and publishable key. */
export function identityADriver(opts: { url: string; publishableKey: string }): IdentityADriver {
  const base = opts.url.replace(/\/+$/, "");
  let session = loadSession();
  let recovering = false;
  const store = new SnapshotStore({ status: "loading", user: null, message: null });

  const save = (next: Session | null) => {
    session = next;
    if (next) localStorage.setItem(STORAGE_KEY, JSON.stringify(next));
    else localStorage.removeItem(STORAGE_KEY);
    store.set(next ? { status: "signed_in", user: next.user, message: null } : { status: "signed_out", user: null });
  };

  const call = async (path: string, init: { method?: string; body?: unknown; token?: string }) => {
    const headers: Record<string, string> = { apikey: opts.publishableKey, "content-type": "application/json" };
    if (init.token) headers.authorization = `Bearer ${init.token}`;
    let res: Response;
    try {
      res = await fetch(`${base}${path}`, {
        method: init.method ?? "POST",
        headers,
        body: init.body === undefined ? undefined : JSON.stringify(init.body),
      });
    } catch {
      throw new Error("Cannot reach the sign-in service. Check your connection and try again.");
    }
    if (!res.ok) throw new Error(await errorMessage(res));
    const text = await res.text();
    return (text ? JSON.parse(text) : {}) as Record<string, unknown>;
  };

  const fetchUser = async (token: string): Promise<SignedInUser> => {
    const u = (await call("/auth/v1/user", { method: "GET", token })) as { id?: string; email?: string };
    return { id: u.id ?? "", email: u.email };
  };

  let refreshing: Promise<string | null> | null = null;
  const refresh = async (): Promise<string | null> => {
    if (!session?.refresh_token) return null;
    try {
      const body = await call("/auth/v1/token?grant_type=refresh_token", { body: { refresh_token: session.refresh_token } });
      const next = toSession(body);
      if (next && !next.user.id) next.user = session.user;
      save(next);
      return next?.access_token ?? null;
    } catch {
      save(null);
      store.set({ message: "Your session expired. Sign in again." });
      return null;
    }
  };

  const redirectTo = `${location.origin}/app/`;

  // Links from the provider's emails carry the session in the URL fragment.
  const fragment = new URLSearchParams(location.hash.slice(1));
  const fragToken = fragment.get("access_token");
  if (fragToken) {
    const type = fragment.get("type");
    history.replaceState(null, "", location.pathname + location.search);
    const pending: Session = {
      access_token: fragToken,
      refresh_token: fragment.get("refresh_token") ?? "",
      expires_at: Number(fragment.get("expires_at")) || Math.floor(Date.now() / 1000) + (Number(fragment.get("expires_in")) || 3600),
      user: { id: "" },
    };
    recovering = type === "recovery";
    fetchUser(fragToken).then(
      (user) => save({ ...pending, user }),
      () => { save(null); store.set({ message: "That link has expired. Sign in or request a new one." }); },
    );
  } else if (fragment.get("error_description")) {
    history.replaceState(null, "", location.pathname + location.search);
    session = null;
    queueMicrotask(() => store.set({ status: "signed_out", message: fragment.get("error_description") }));
  } else {
    queueMicrotask(() => save(session));
  }

  return {
    provider: "identity_a",
    browserId: null,
    get recovering() {
      return recovering;
    },
    snapshot: store.get,
    subscribe: store.subscribe,
    async token() {
      if (!session) return null;
      if (session.expires_at - 30 > Date.now() / 1000) return session.access_token;
      refreshing ??= refresh().finally(() => { refreshing = null; });
      return refreshing;
    },
    expire(message) {
      save(null);
      store.set({ message });
    },
    async signIn(email, password) {
      const body = await call("/auth/v1/token?grant_type=password", { body: { email, password } });
      const next = toSession(body);
      if (!next) throw new Error("The sign-in service did not return a session.");
      save(next);
    },
    async signUp(email, password) {
      const body = await call(`/auth/v1/signup?redirect_to=${encodeURIComponent(redirectTo)}`, { body: { email, password } });
      const next = toSession(body);
      if (!next) return "confirm";
      save(next);
      return "signed_in";
    },
    async recover(email) {
      await call(`/auth/v1/recover?redirect_to=${encodeURIComponent(redirectTo)}`, { body: { email } });
    },
    async updatePassword(password) {
      if (!session) throw new Error("Your recovery link has expired. Request a new one.");
      await call("/auth/v1/user", { method: "PUT", body: { password }, token: session.access_token });
      recovering = false;
      store.set({ message: null });
    },
    async signOut() {
      const token = session?.access_token;
      save(null);
      if (token) await call("/auth/v1/logout", { token }).catch(() => {});
    },
  };
}
