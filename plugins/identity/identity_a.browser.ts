/**
 * The browser half of `identity_a` (served to the chat UI as its sign-in module; contract in
 * core/auth/browser.ts): email/password against the GoTrue-style auth API (`/auth/v1/...`,
 * header `apikey: <publishable key>`). The session lives in localStorage and is refreshed
 * with its refresh token shortly before it expires. Links from emails (password recovery,
 * sign-up confirmation) come back to `/app/#access_token=...&type=...`; a recovery link
 * shows "Choose a new password" before the chat.
 *
 * Shipped as text in parts (./browser-parts.ts): the API client, the session, and the forms of
 * ./identity_a.forms.browser.ts, each a function using nothing from outside its body but types,
 * browser globals and the values it is given; {@link identityABrowser} wires them.
 */
import type { AuthSnapshot, BrowserAuthContext, BrowserAuthDriver, SignedInUser } from "../../core/index.ts";
import { browserModuleOf } from "./browser-parts.ts";
import {
  identityADom,
  identityANewPassword,
  identityASignIn,
  identityASignInForm,
} from "./identity_a.forms.browser.ts";

/** A session as the auth API gives it and localStorage keeps it. */
export interface Session {
  access_token: string;
  refresh_token: string;
  /** Seconds since the epoch. */
  expires_at: number;
  user: SignedInUser;
}

/** The auth API (`/auth/v1/...`) of `settings.url`, with the publishable key. */
export const identityAApi = (settings: Record<string, unknown>) => {
  const base = String(settings.url ?? "").replace(/\/+$/, "");
  const publishableKey = String(settings.publishable_key ?? "");

  /** The provider's error bodies vary by endpoint; this finds the human message. */
  const errorMessage = async (res: Response): Promise<string> => {
    try {
      const body = (await res.json()) as Record<string, unknown>;
      const msg = body.error_description ?? body.msg ?? body.message ?? body.error;
      if (typeof msg === "string" && msg) return msg;
    } catch { /* not JSON */ }
    return `The sign-in service answered ${res.status}.`;
  };

  const toSession = (body: Record<string, unknown>): Session | null => {
    if (typeof body.access_token !== "string") return null;
    const user = (body.user ?? {}) as { id?: string; email?: string; user_metadata?: { full_name?: string } };
    const expiresIn = typeof body.expires_in === "number" ? body.expires_in : 3600;
    return {
      access_token: body.access_token,
      refresh_token: typeof body.refresh_token === "string" ? body.refresh_token : "",
      expires_at: typeof body.expires_at === "number" ? body.expires_at : Math.floor(Date.now() / 1000) + expiresIn,
      user: { id: user.id ?? "", email: user.email, name: user.user_metadata?.full_name },
    };
  };

  const call = async (path: string, init: { method?: string; body?: unknown; token?: string }) => {
    const headers: Record<string, string> = { apikey: publishableKey, "content-type": "application/json" };
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

  return { call, toSession, fetchUser };
};
export type IdentityAApi = ReturnType<typeof identityAApi>;

/**
 * The session: kept in localStorage, refreshed before it expires, taken from the URL fragment
 * when the user arrives from an email's link. `driver` is the driver's store half (all but
 * `mountSignIn`); the rest is for the forms.
 */
export const identityASession = (api: IdentityAApi) => {
  const STORAGE_KEY = "agentcli.identity_a.session";
  let snap: AuthSnapshot = { status: "loading", user: null, message: null };
  const listeners = new Set<() => void>();
  const set = (next: Partial<AuthSnapshot>) => {
    snap = { ...snap, ...next };
    for (const l of listeners) l();
  };

  const loadSession = (): Session | null => {
    try {
      const raw = localStorage.getItem(STORAGE_KEY);
      return raw ? (JSON.parse(raw) as Session) : null;
    } catch {
      return null;
    }
  };
  let session = loadSession();
  /** True while the user arrived from a recovery link and must choose a new password. */
  let recovering = false;

  const save = (next: Session | null) => {
    session = next;
    if (next) localStorage.setItem(STORAGE_KEY, JSON.stringify(next));
    else localStorage.removeItem(STORAGE_KEY);
    if (next && !recovering) set({ status: "signed_in", user: next.user, message: null });
    else set({ status: "signed_out", user: null });
  };

  let refreshing: Promise<string | null> | null = null;
  const refresh = async (): Promise<string | null> => {
    if (!session?.refresh_token) return null;
    try {
      const body = await api.call("/auth/v1/token?grant_type=refresh_token", {
        body: { refresh_token: session.refresh_token },
      });
      const next = api.toSession(body);
      if (next && !next.user.id) next.user = session.user;
      save(next);
      return next?.access_token ?? null;
    } catch {
      save(null);
      set({ message: "Your session expired. Sign in again." });
      return null;
    }
  };

  // Links from the provider's emails carry the session in the URL fragment.
  const fragment = new URLSearchParams(location.hash.slice(1));
  const fragToken = fragment.get("access_token");
  if (fragToken) {
    history.replaceState(null, "", location.pathname + location.search);
    const pending: Session = {
      access_token: fragToken,
      refresh_token: fragment.get("refresh_token") ?? "",
      expires_at: Number(fragment.get("expires_at")) ||
        Math.floor(Date.now() / 1000) + (Number(fragment.get("expires_in")) || 3600),
      user: { id: "" },
    };
    recovering = fragment.get("type") === "recovery";
    api.fetchUser(fragToken).then(
      (user) => save({ ...pending, user }),
      () => {
        recovering = false;
        save(null);
        set({ message: "That link has expired. Sign in or request a new one." });
      },
    );
  } else if (fragment.get("error_description")) {
    history.replaceState(null, "", location.pathname + location.search);
    session = null;
    queueMicrotask(() => set({ status: "signed_out", message: fragment.get("error_description") }));
  } else {
    queueMicrotask(() => save(session));
  }

  const driver: Omit<BrowserAuthDriver, "mountSignIn"> = {
    snapshot: () => snap,
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async token() {
      if (!session) return null;
      if (session.expires_at - 30 > Date.now() / 1000) return session.access_token;
      refreshing ??= refresh().finally(() => {
        refreshing = null;
      });
      return refreshing;
    },
    expire(message) {
      recovering = false;
      save(null);
      set({ message });
    },
    async signOut() {
      const token = session?.access_token;
      save(null);
      if (token) await api.call("/auth/v1/logout", { token }).catch(() => {});
    },
  };
  return {
    driver,
    save,
    current: () => session,
    /** Whether the new-password form shows (a recovery link, its session not yet saved as signed in). */
    recovering: () => recovering && session !== null,
    /** The new password is saved: the recovery link's session signs the user in. */
    recovered: () => {
      recovering = false;
      save(session);
    },
  };
};
export type IdentityASession = ReturnType<typeof identityASession>;

/** The module's parts: each is shipped as its own text (./browser-parts.ts). */
export const identityAParts = {
  api: identityAApi,
  session: identityASession,
  dom: identityADom,
  signIn: identityASignIn,
  signInForm: identityASignInForm,
  newPassword: identityANewPassword,
};
export type IdentityAParts = typeof identityAParts;

/** The factory: the API client, the session over it, and the forms drawn by `mountSignIn`. */
export const identityABrowser = (
  settings: Record<string, unknown>,
  ctx: BrowserAuthContext,
  parts: IdentityAParts,
): BrowserAuthDriver => {
  const api = parts.api(settings);
  const auth = parts.session(api);
  const dom = parts.dom();
  return {
    ...auth.driver,
    mountSignIn: (root) => parts.signIn({ root, auth, api, dom, redirectTo: ctx.appUrl, parts }),
  };
};

/** The browser module's source (`identity.ui.module`). */
export const identityABrowserModule = (): string => browserModuleOf(identityABrowser, identityAParts);
