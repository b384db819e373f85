/**
 * A small bounded cache of positive token verifications, keyed by a hash of the token (the
 * token itself is never kept). An entry lives `ttlMs` at most and never past the token's own
 * expiry; failures are not cached. When full, the oldest entry goes first.
 *
 * @example
 * const cache = new TokenCache({ ttlMs: 30_000, maxEntries: 1000 });
 * const hit = await cache.get(token);
 * if (!hit) cache.set(token, user, expSeconds);
 */
import type { AuthUser } from "../kernel/index.ts";
import { sha256Hex } from "./constant-time.ts";

export interface TokenCacheOptions {
  ttlMs?: number;
  maxEntries?: number;
  /** The clock, in milliseconds; tests pass their own. */
  now?: () => number;
}

export class TokenCache {
  readonly #entries = new Map<string, { user: AuthUser; expiresAt: number }>();
  readonly #ttlMs: number;
  readonly #max: number;
  readonly #now: () => number;

  constructor(opts: TokenCacheOptions = {}) {
    this.#ttlMs = opts.ttlMs ?? 30_000;
    this.#max = opts.maxEntries ?? 1000;
    this.#now = opts.now ?? Date.now;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The cached user of `token` in `scope` (e.g. the identity server URL), or null. */
  async get(token: string, scope = ""): Promise<AuthUser | null> {
    const key = await sha256Hex(`${scope}\n${token}`);
    const entry = this.#entries.get(key);
    if (!entry) return null;
    if (entry.expiresAt <= this.#now()) {
      this.#entries.delete(key);
      return null;
    }
    return entry.user;
  }

  /** Remembers a verified token; `expSeconds` is the token's own `exp` claim when it has one. */
  async set(token: string, user: AuthUser, opts: { scope?: string; expSeconds?: number | null } = {}): Promise<void> {
    const now = this.#now();
    let expiresAt = now + this.#ttlMs;
    if (typeof opts.expSeconds === "number" && Number.isFinite(opts.expSeconds)) {
      expiresAt = Math.min(expiresAt, opts.expSeconds * 1000);
    }
    if (expiresAt <= now) return;
    const key = await sha256Hex(`${opts.scope ?? ""}\n${token}`);
    this.#entries.delete(key);
    while (this.#entries.size >= this.#max) {
      const oldest = this.#entries.keys().next().value;
      if (oldest === undefined) break;
      this.#entries.delete(oldest);
    }
    this.#entries.set(key, { user, expiresAt });
  }

  clear(): void {
    this.#entries.clear();
  }
}
