/**
 * The browser half of an identity plugin (docs/plugins.md, "Sign-in UI"): an ES module the
 * chat UI loads with a dynamic `import()` from `/app/auth-driver.js` when `[auth].provider`
 * is the plugin's provider. Its default export is a {@link BrowserAuthFactory}: given the
 * plugin's browser settings (`identity.ui.settings(env)`, publishable values only), it
 * returns a {@link BrowserAuthDriver} that keeps the session, hands out bearer tokens and
 * draws its own sign-in screen into an element of the UI's sign-in card.
 *
 * The module runs in the browser, so it cannot import agentcli or Node: it is either a
 * self-contained function turned into a module with {@link browserModule}, or JavaScript the
 * plugin bundled itself (its source text as `identity.ui.module`).
 *
 * @example
 * // my-idp.browser.ts: no value imports, only types
 * import type { BrowserAuthFactory } from "agentcli";
 * export const myIdpBrowser: BrowserAuthFactory = (settings, ctx) => { ... };
 * // my-idp.ts
 * identity: { ..., ui: { module: browserModule(myIdpBrowser), settings: (env) => ({ url: env.MY_IDP_URL ?? "" }) } }
 */

/** The signed-in person, as the UI shows them. */
export interface SignedInUser {
  id: string;
  email?: string;
  name?: string;
}

/**
 * What the UI renders: `loading` (a spinner), `signed_out` (the sign-in card, with the
 * driver's {@link BrowserAuthDriver.mountSignIn} inside), `signed_in` (the chat) or `error`
 * (sign-in cannot start: `message` says why and how to fix it).
 */
export interface AuthSnapshot {
  status: "loading" | "signed_out" | "signed_in" | "error";
  user: SignedInUser | null;
  /** Shown above the sign-in screen (e.g. "Your session has expired") or on the error screen. */
  message: string | null;
}

/** What the browser module's factory returns. The UI subscribes to it like an external store. */
export interface BrowserAuthDriver {
  /** The current state; return the same object until it changes (React's `useSyncExternalStore`). */
  snapshot(): AuthSnapshot;
  /** Calls `listener` after every change; returns the unsubscribe function. */
  subscribe(listener: () => void): () => void;
  /** A token for `Authorization: Bearer` on every API call, refreshed when needed; null when signed out. */
  token(): Promise<string | null>;
  /** The API answered 401: drop the session and show sign-in with `message`. */
  expire(message: string): void;
  signOut(): Promise<void>;
  /**
   * Draws the sign-in screen (forms, or the provider's widget) into `el`, an empty element in
   * the UI's sign-in card, while the snapshot is `signed_out`; returns a function that removes it.
   * Use the UI's classes (`auth-form`, `field`, `btn btn-primary btn-block`, `auth-error`,
   * `auth-info`, `link`) to look like the rest of the app.
   */
  mountSignIn(el: HTMLElement): () => void;
}

/** What the factory gets besides its settings. */
export interface BrowserAuthContext {
  /** The `[auth].provider` value. */
  provider: string;
  /** The chat UI's own address (`<origin>/app/`), for redirect URLs in sign-up and recovery links. */
  appUrl: string;
}

/** The default export of an identity plugin's browser module. */
export type BrowserAuthFactory = (settings: Record<string, unknown>, ctx: BrowserAuthContext) => BrowserAuthDriver;

/**
 * Turns a self-contained factory into the source of a browser ES module (its default export).
 * The function must not use anything from outside its own body except types and browser
 * globals: it is shipped as text (`Function.prototype.toString`), whatever runtime or bundler
 * compiled it. Arrow functions and `function` expressions both work.
 */
export function browserModule(factory: BrowserAuthFactory): string {
  const source = factory.toString().trim();
  // A method shorthand (`{ make(s, c) {...} }.make`) is not an expression on its own.
  if (!/^function\b/.test(source) && /^[A-Za-z_$][\w$]*\s*\(/.test(source)) {
    return `export default function ${source}\n`;
  }
  return `export default (${source});\n`;
}
