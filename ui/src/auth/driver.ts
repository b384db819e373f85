/**
 * One small external store per auth provider. The app reads its snapshot with
 * `useSyncExternalStore`, asks it for a fresh token before every API call, and tells it
 * when the API answered 401 so the user signs in again.
 */
export interface SignedInUser {
  id: string;
  email?: string;
  name?: string;
}

export interface AuthSnapshot {
  status: "loading" | "signed_out" | "signed_in" | "error";
  user: SignedInUser | null;
  /** Shown on the sign-in screen (e.g. "Your session expired") or the error screen. */
  message: string | null;
}

export interface AuthDriver {
  readonly provider: string;
  snapshot(): AuthSnapshot;
  subscribe(listener: () => void): () => void;
  /** A token for `Authorization: Bearer`, refreshed when needed; null when none applies. */
  token(): Promise<string | null>;
  /** The API rejected our credentials: drop them and ask the user to sign in again. */
  expire(message: string): void;
  signOut(): Promise<void>;
  /** The anonymous per-browser id (UX scoping only), null for real providers. */
  readonly browserId: string | null;
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
