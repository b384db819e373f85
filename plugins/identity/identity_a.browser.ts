/**
 * The browser half of `identity_a` (served to the chat UI as its sign-in module; contract in
 * core/auth/browser.ts): email/password against the GoTrue-style auth API (`/auth/v1/...`,
 * header `apikey: <publishable key>`). The session lives in localStorage and is refreshed
 * with its refresh token shortly before it expires. Links from emails (password recovery,
 * sign-up confirmation) come back to `/app/#access_token=...&type=...`; a recovery link
 * shows "Choose a new password" before the chat.
 *
 * Shipped as text (`browserModule`): nothing from outside this function but types and
 * browser globals.
 */
import type { AuthSnapshot, BrowserAuthFactory, SignedInUser } from "../../core/index.ts";

export const identityABrowser: BrowserAuthFactory = (settings, ctx) => {
  const STORAGE_KEY = "agentcli.identity_a.session";
  interface Session {
    access_token: string;
    refresh_token: string;
    /** Seconds since the epoch. */
    expires_at: number;
    user: SignedInUser;
  }
  const base = String(settings.url ?? "").replace(/\/+$/, "");
  const publishableKey = String(settings.publishable_key ?? "");

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

  let refreshing: Promise<string | null> | null = null;
  const refresh = async (): Promise<string | null> => {
    if (!session?.refresh_token) return null;
    try {
      const body = await call("/auth/v1/token?grant_type=refresh_token", {
        body: { refresh_token: session.refresh_token },
      });
      const next = toSession(body);
      if (next && !next.user.id) next.user = session.user;
      save(next);
      return next?.access_token ?? null;
    } catch {
      save(null);
      set({ message: "Your session expired. Sign in again." });
      return null;
    }
  };

  const redirectTo = ctx.appUrl;

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
    fetchUser(fragToken).then(
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

  /** A DOM element with attributes (`on*` functions become listeners) and children. */
  const h = (
    tag: string,
    attrs: Record<string, unknown> = {},
    ...children: Array<Node | string | null | false>
  ): HTMLElement => {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) {
      if (v === undefined || v === null || v === false) continue;
      if (typeof v === "function") el.addEventListener(k.slice(2).toLowerCase(), v as EventListener);
      else el.setAttribute(k, v === true ? "" : String(v));
    }
    for (const c of children) if (c) el.append(c);
    return el;
  };
  /** A labelled input, with an optional link beside the label. */
  const field = (input: HTMLElement, label: string, extra: Node | null = null) => {
    const tag = h("label", { for: input.id }, label);
    return h("div", { class: "field" }, extra ? h("div", { class: "field-row" }, tag, extra) : tag, input);
  };

  type Mode = "sign_in" | "sign_up" | "recover";
  const TITLES: Record<Mode, string> = {
    sign_in: "Sign in",
    sign_up: "Create your account",
    recover: "Reset your password",
  };
  const SUBMIT: Record<Mode, string> = { sign_in: "Sign in", sign_up: "Sign up", recover: "Send reset link" };

  /** Email/password sign-in, sign-up and password reset (or the new-password form after a recovery link). */
  const mountSignIn = (root: HTMLElement): () => void => {
    let mode: Mode = "sign_in";
    let info: string | null = null;
    let error: string | null = null;
    let email = "";

    const renderNewPassword = () => {
      const input = h("input", {
        id: "new-password",
        type: "password",
        autocomplete: "new-password",
        minlength: 6,
        required: true,
        autofocus: true,
      }) as HTMLInputElement;
      const button = h(
        "button",
        { type: "submit", class: "btn btn-primary btn-block" },
        "Save password",
      ) as HTMLButtonElement;
      const form = h(
        "form",
        {
          class: "auth-form",
          onSubmit: async (e: Event) => {
            e.preventDefault();
            button.disabled = true;
            try {
              if (!session) throw new Error("Your recovery link has expired. Request a new one.");
              await call("/auth/v1/user", {
                method: "PUT",
                body: { password: input.value },
                token: session.access_token,
              });
              recovering = false;
              save(session);
            } catch (err) {
              error = err instanceof Error ? err.message : String(err);
              render();
            }
          },
        },
        h("h2", {}, "Choose a new password"),
        error ? h("p", { class: "auth-error", role: "alert" }, error) : null,
        field(input, "New password"),
        button,
      );
      root.replaceChildren(form);
      input.focus();
    };

    const render = () => {
      if (recovering && session) return renderNewPassword();
      const switchTo = (next: Mode) => () => {
        mode = next;
        error = null;
        render();
      };
      const emailInput = h("input", {
        id: "email",
        type: "email",
        autocomplete: "email",
        required: true,
        value: email,
      }) as HTMLInputElement;
      emailInput.addEventListener("input", () => {
        email = emailInput.value;
      });
      const password = mode === "recover" ? null : h("input", {
        id: "password",
        type: "password",
        autocomplete: mode === "sign_up" ? "new-password" : "current-password",
        required: true,
        minlength: mode === "sign_up" ? 6 : undefined,
      }) as HTMLInputElement;
      const button = h(
        "button",
        { type: "submit", class: "btn btn-primary btn-block" },
        SUBMIT[mode],
      ) as HTMLButtonElement;
      const submit = async (e: Event) => {
        e.preventDefault();
        button.disabled = true;
        button.prepend(h("span", { class: "spinner" }));
        error = null;
        info = null;
        const address = emailInput.value.trim();
        try {
          if (mode === "sign_in") {
            const next = toSession(
              await call("/auth/v1/token?grant_type=password", { body: { email: address, password: password!.value } }),
            );
            if (!next) throw new Error("The sign-in service did not return a session.");
            save(next);
            return;
          }
          if (mode === "sign_up") {
            const next = toSession(
              await call(`/auth/v1/signup?redirect_to=${encodeURIComponent(redirectTo)}`, {
                body: { email: address, password: password!.value },
              }),
            );
            if (next) return save(next);
            info = `We sent a confirmation link to ${address}. Open it to finish signing up.`;
          } else {
            await call(`/auth/v1/recover?redirect_to=${encodeURIComponent(redirectTo)}`, { body: { email: address } });
            info = `If an account exists for ${address}, a password reset link is on its way.`;
          }
          mode = "sign_in";
        } catch (err) {
          error = err instanceof Error ? err.message : String(err);
        }
        render();
      };
      const form = h(
        "form",
        { class: "auth-form", "aria-labelledby": "auth-title", "data-testid": "sign-in-form", onSubmit: submit },
        h("h2", { id: "auth-title" }, TITLES[mode]),
        info ? h("p", { class: "auth-info", role: "status" }, info) : null,
        error ? h("p", { class: "auth-error", role: "alert", "data-testid": "auth-error" }, error) : null,
        field(emailInput, "Email"),
        password
          ? field(
            password,
            "Password",
            mode === "sign_in"
              ? h("button", { type: "button", class: "link", onClick: switchTo("recover") }, "Forgot password?")
              : null,
          )
          : null,
        button,
        h(
          "p",
          { class: "auth-switch muted" },
          ...(mode === "sign_in"
            ? ["No account? ", h("button", { type: "button", class: "link", onClick: switchTo("sign_up") }, "Sign up")]
            : [
              "Have an account? ",
              h("button", { type: "button", class: "link", onClick: switchTo("sign_in") }, "Sign in"),
            ]),
        ),
      );
      root.replaceChildren(form);
      emailInput.focus();
    };
    render();
    return () => root.replaceChildren();
  };

  return {
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
      if (token) await call("/auth/v1/logout", { token }).catch(() => {});
    },
    mountSignIn,
  };
};
