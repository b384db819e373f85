/**
 * The forms of `identity_a`'s browser module (./identity_a.browser.ts): email/password sign-in,
 * sign-up and password reset, and the new-password form after a recovery link. Each function is
 * a part shipped as its own text (./browser-parts.ts): nothing from outside its body but types,
 * browser globals and the values it is given.
 */
import type { IdentityAApi, IdentityASession } from "./identity_a.browser.ts";

/** `h` (a DOM element with attributes, `on*` functions becoming listeners, and children) and `field`. */
export const identityADom = () => {
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
  return { h, field };
};
export type IdentityADom = ReturnType<typeof identityADom>;

export type Mode = "sign_in" | "sign_up" | "recover";

/** What `mountSignIn` hands the forms. */
export interface SignInOptions {
  root: HTMLElement;
  auth: IdentityASession;
  api: IdentityAApi;
  dom: IdentityADom;
  /** The app's address, where the links of sign-up and recovery emails return. */
  redirectTo: string;
  /** The forms it draws (parts of the module, see ./identity_a.browser.ts). */
  parts: { signInForm: typeof identityASignInForm; newPassword: typeof identityANewPassword };
}

/** `mountSignIn`: keeps the form's state (mode, messages, the email typed) and submits it. */
export const identityASignIn = ({ root, auth, api, dom, redirectTo, parts }: SignInOptions): () => void => {
  let mode: Mode = "sign_in";
  let info: string | null = null;
  let error: string | null = null;
  let email = "";

  const submit = async (address: string, password: string | undefined) => {
    error = null;
    info = null;
    try {
      if (mode === "sign_in") {
        const next = api.toSession(
          await api.call("/auth/v1/token?grant_type=password", { body: { email: address, password } }),
        );
        if (!next) throw new Error("The sign-in service did not return a session.");
        auth.save(next);
        return;
      }
      if (mode === "sign_up") {
        const next = api.toSession(
          await api.call(`/auth/v1/signup?redirect_to=${encodeURIComponent(redirectTo)}`, {
            body: { email: address, password },
          }),
        );
        if (next) return auth.save(next);
        info = `We sent a confirmation link to ${address}. Open it to finish signing up.`;
      } else {
        await api.call(`/auth/v1/recover?redirect_to=${encodeURIComponent(redirectTo)}`, { body: { email: address } });
        info = `If an account exists for ${address}, a password reset link is on its way.`;
      }
      mode = "sign_in";
    } catch (err) {
      error = err instanceof Error ? err.message : String(err);
    }
    render();
  };

  const render = () => {
    if (auth.recovering()) {
      return parts.newPassword({
        root,
        auth,
        api,
        dom,
        error,
        fail: (message) => {
          error = message;
          render();
        },
      });
    }
    parts.signInForm({
      root,
      dom,
      state: { mode, info, error, email },
      onEmail: (value) => (email = value),
      onSubmit: submit,
      switchTo: (next) => {
        mode = next;
        error = null;
        render();
      },
    });
  };
  render();
  return () => root.replaceChildren();
};

/** What the sign-in form shows and whom it tells. */
export interface SignInFormOptions {
  root: HTMLElement;
  dom: IdentityADom;
  state: { mode: Mode; info: string | null; error: string | null; email: string };
  onEmail(value: string): void;
  /** The form was submitted (the button shows a spinner meanwhile); the form is drawn again after. */
  onSubmit(email: string, password: string | undefined): Promise<void>;
  switchTo(mode: Mode): void;
}

/** Draws the sign-in, sign-up or reset form into `root` (replacing what is there) and focuses the email. */
export const identityASignInForm = ({ root, dom, state, onEmail, onSubmit, switchTo }: SignInFormOptions): void => {
  const { h, field } = dom;
  const { mode, info, error } = state;
  const TITLES: Record<Mode, string> = {
    sign_in: "Sign in",
    sign_up: "Create your account",
    recover: "Reset your password",
  };
  const SUBMIT: Record<Mode, string> = { sign_in: "Sign in", sign_up: "Sign up", recover: "Send reset link" };
  const link = (label: string, next: Mode) =>
    h("button", { type: "button", class: "link", onClick: () => switchTo(next) }, label);
  const emailInput = h("input", {
    id: "email",
    type: "email",
    autocomplete: "email",
    required: true,
    value: state.email,
  }) as HTMLInputElement;
  emailInput.addEventListener("input", () => onEmail(emailInput.value));
  const password = mode === "recover" ? null : h("input", {
    id: "password",
    type: "password",
    autocomplete: mode === "sign_up" ? "new-password" : "current-password",
    required: true,
    minlength: mode === "sign_up" ? 6 : undefined,
  }) as HTMLInputElement;
  const button = h("button", { type: "submit", class: "btn btn-primary btn-block" }, SUBMIT[mode]) as HTMLButtonElement;
  const submit = (e: Event) => {
    e.preventDefault();
    button.disabled = true;
    button.prepend(h("span", { class: "spinner" }));
    return onSubmit(emailInput.value.trim(), password?.value);
  };
  const form = h(
    "form",
    { class: "auth-form", "aria-labelledby": "auth-title", "data-testid": "sign-in-form", onSubmit: submit },
    h("h2", { id: "auth-title" }, TITLES[mode]),
    info ? h("p", { class: "auth-info", role: "status" }, info) : null,
    error ? h("p", { class: "auth-error", role: "alert", "data-testid": "auth-error" }, error) : null,
    field(emailInput, "Email"),
    password ? field(password, "Password", mode === "sign_in" ? link("Forgot password?", "recover") : null) : null,
    button,
    h(
      "p",
      { class: "auth-switch muted" },
      ...(mode === "sign_in"
        ? ["No account? ", link("Sign up", "sign_up")]
        : ["Have an account? ", link("Sign in", "sign_in")]),
    ),
  );
  root.replaceChildren(form);
  emailInput.focus();
};

/** What the new-password form needs; `fail` shows an error (and draws the forms again). */
export interface NewPasswordOptions {
  root: HTMLElement;
  auth: IdentityASession;
  api: IdentityAApi;
  dom: IdentityADom;
  error: string | null;
  fail(message: string): void;
}

/** After a recovery link: "Choose a new password", saved with the link's session, which then signs the user in. */
export const identityANewPassword = ({ root, auth, api, dom, error, fail }: NewPasswordOptions): void => {
  const { h, field } = dom;
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
  const save = async (e: Event) => {
    e.preventDefault();
    button.disabled = true;
    try {
      const session = auth.current();
      if (!session) throw new Error("Your recovery link has expired. Request a new one.");
      await api.call("/auth/v1/user", { method: "PUT", body: { password: input.value }, token: session.access_token });
      auth.recovered();
    } catch (err) {
      fail(err instanceof Error ? err.message : String(err));
    }
  };
  const form = h(
    "form",
    { class: "auth-form", onSubmit: save },
    h("h2", {}, "Choose a new password"),
    error ? h("p", { class: "auth-error", role: "alert" }, error) : null,
    field(input, "New password"),
    button,
  );
  root.replaceChildren(form);
  input.focus();
};
