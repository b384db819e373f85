/**
 * A provider's JSON Web Key Set, fetched with a bearer credential and kept in memory. Keys
 * are refetched when the set is older than `maxAgeMs`, and when a token names a key id we
 * do not know (key rotation), at most once per `cooldownMs` so random key ids cannot make us
 * hammer the provider. A failed fetch is not remembered beyond `cooldownMs`; the last good set
 * keeps serving while the provider is down.
 *
 * @example
 * const store = new JwksKeyStore({ url, headers: { authorization: `Bearer ${secret}` } });
 * await jwtVerify(token, store.getKey, { algorithms: ["RS256"] });
 */
import { createLocalJWKSet, errors, type JSONWebKeySet, type JWSHeaderParameters, type FlattenedJWSInput, type CryptoKey } from "jose";
import { identityUnavailable } from "./auth-error.ts";

export interface JwksKeyStoreOptions {
  url: string;
  headers?: Record<string, string>;
  /** Name shown in errors, e.g. "identity_b". */
  label?: string;
  maxAgeMs?: number;
  cooldownMs?: number;
  timeoutMs?: number;
  now?: () => number;
}

type LocalSet = ReturnType<typeof createLocalJWKSet>;

export class JwksKeyStore {
  readonly #opts: Required<Omit<JwksKeyStoreOptions, "headers">> & { headers: Record<string, string> };
  #set: LocalSet | null = null;
  #fetchedAt = -Infinity;
  #lastRotationFetch = -Infinity;
  #lastFailure = -Infinity;
  #inflight: Promise<void> | null = null;
  /** How many times the key set was fetched; tests read it. */
  fetches = 0;

  constructor(opts: JwksKeyStoreOptions) {
    this.#opts = {
      url: opts.url,
      headers: opts.headers ?? {},
      label: opts.label ?? "identity provider",
      maxAgeMs: opts.maxAgeMs ?? 10 * 60_000,
      cooldownMs: opts.cooldownMs ?? 30_000,
      timeoutMs: opts.timeoutMs ?? 5_000,
      now: opts.now ?? Date.now,
    };
  }

  /** The key for a token's protected header; a jose `JWTVerifyGetKey`. */
  readonly getKey = async (header: JWSHeaderParameters, token: FlattenedJWSInput): Promise<CryptoKey> => {
    const now = this.#opts.now();
    if (!this.#set || now - this.#fetchedAt > this.#opts.maxAgeMs) {
      if (!this.#set || now - this.#lastFailure >= this.#opts.cooldownMs) await this.#refresh(!this.#set);
    }
    try {
      return await this.#set!(header, token);
    } catch (err) {
      if (!(err instanceof errors.JWKSNoMatchingKey) || now - this.#lastRotationFetch < this.#opts.cooldownMs) throw err;
      this.#lastRotationFetch = now;
      await this.#refresh(true);
      return await this.#set!(header, token);
    }
  };

  async #refresh(required: boolean): Promise<void> {
    this.#inflight ??= this.#fetch().finally(() => {
      this.#inflight = null;
    });
    try {
      await this.#inflight;
    } catch (err) {
      this.#lastFailure = this.#opts.now();
      if (required || !this.#set) throw err;
    }
  }

  async #fetch(): Promise<void> {
    const { url, headers, label, timeoutMs } = this.#opts;
    const hint = `Check that the ${label} key set at ${url} is reachable and that its credential is right; requests are refused until it is.`;
    let res: Response;
    try {
      this.fetches++;
      res = await fetch(url, { headers: { accept: "application/json", ...headers }, signal: AbortSignal.timeout(timeoutMs) });
    } catch (err) {
      throw identityUnavailable(`Cannot authenticate request: the ${label} key set at ${url} is unreachable`, hint, err);
    }
    if (!res.ok) {
      await res.body?.cancel();
      throw identityUnavailable(`Cannot authenticate request: the ${label} key set at ${url} answered HTTP ${res.status}`, hint);
    }
    let body: unknown;
    try {
      body = await res.json();
    } catch (err) {
      throw identityUnavailable(`Cannot authenticate request: the ${label} key set at ${url} is not JSON`, hint, err);
    }
    if (!body || typeof body !== "object" || !Array.isArray((body as { keys?: unknown }).keys)) {
      throw identityUnavailable(`Cannot authenticate request: the ${label} key set at ${url} has no "keys" array`, hint);
    }
    this.#set = createLocalJWKSet(body as JSONWebKeySet);
    this.#fetchedAt = this.#opts.now();
  }
}
