/**
 * The UI's auth driver: one small external store per page. The app reads its snapshot with
 * `useSyncExternalStore`, asks it for a fresh token before every API call, and tells it when
 * the API answered 401 so the user signs in again. Identity plugins supply it as a browser
 * module (the contract, shared with core, is `core/auth/browser.ts`); without one the
 * built-in token-less driver (`anonymous.ts`) is used.
 */
import type { AuthSnapshot, BrowserAuthDriver } from "../../../core/auth/browser.ts";

export type { AuthSnapshot, BrowserAuthDriver, SignedInUser } from "../../../core/auth/browser.ts";

export interface AuthDriver extends Omit<BrowserAuthDriver, "mountSignIn"> {
  readonly provider: string;
  /** The anonymous per-browser id (UX scoping only), null for real providers. */
  readonly browserId: string | null;
  /** The plugin's sign-in screen; absent for the token-less driver (a 401 is then an error, not a sign-in). */
  mountSignIn?(el: HTMLElement): () => void;
}

/** A tiny observable snapshot shared by the drivers. */
export class SnapshotStore {
  #snap: AuthSnapshot;
  #listeners = new Set<() => void>();
  constructor(initial: AuthSnapshot) {
    this.#snap = initial;
  }
  get = (): AuthSnapshot => this.#snap;
  set(next: Partial<AuthSnapshot>): void {
    this.#snap = { ...this.#snap, ...next };
    for (const l of this.#listeners) l();
  }
  subscribe = (listener: () => void): (() => void) => {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  };
}
