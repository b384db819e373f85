/**
 * A provider's JSON Web Key Set, fetched with a bearer credential and kept in memory by `jose`'s
 * remote JWK set (which caches for `maxAgeMs`, shares one in-flight fetch and times out after
 * `timeoutMs`). On top of it, two rules of ours:
 * - a token naming a key id we do not know (key rotation) refetches at most once per
 *   `cooldownMs` since the last such refetch, so random key ids cannot make us hammer the
 *   provider, yet a rotation right after a scheduled fetch is still followed;
 * - a failed fetch is not retried for `cooldownMs`: the last good set keeps serving while the
 *   provider is down; without one, requests fail closed with 503.
 *
 * @example
 * const store = new JwksKeyStore({ url, headers: { authorization: `Bearer ${secret}` } });
 * await jwtVerify(token, store.getKey, { algorithms: ["RS256"] });
 */
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  type CryptoKey,
  customFetch,
  errors,
  type FlattenedJWSInput,
  type JSONWebKeySet,
  type JWSHeaderParameters,
} from "jose";
import { identityUnavailable } from "./auth-error.ts";

export interface JwksKeyStoreOptions {
  url: string;
  headers?: Record<string, string>;
  /** Name shown in errors, e.g. "identity_b". */
  label?: string;
  maxAgeMs?: number;
  cooldownMs?: number;
  timeoutMs?: number;
}

type LocalSet = ReturnType<typeof createLocalJWKSet>;
type RemoteSet = ReturnType<typeof createRemoteJWKSet>;

/** Marks the errors of our own fetch, so they are told apart from a token's key not matching. */
const unavailable = new WeakSet<object>();

export class JwksKeyStore {
  readonly #remote: RemoteSet;
  readonly #cooldownMs: number;
  /** The newest set fetched; serves while a refetch fails. */
  #lastGood: LocalSet | null = null;
  #lastRotationFetch = -Infinity;
  #lastFailure = -Infinity;

  constructor(opts: JwksKeyStoreOptions) {
    const label = opts.label ?? "identity provider";
    this.#cooldownMs = opts.cooldownMs ?? 30_000;
    this.#remote = createRemoteJWKSet(new URL(opts.url), {
      headers: opts.headers ?? {},
      cacheMaxAge: opts.maxAgeMs ?? 10 * 60_000,
      timeoutDuration: opts.timeoutMs ?? 5_000,
      // Rotation refetches are ours (see getKey): jose never refetches on a missing key by itself.
      cooldownDuration: Infinity,
      [customFetch]: (url, init) => this.#fetch(url, init, label),
    });
  }

  /** The key for a token's protected header; a jose `JWTVerifyGetKey`. */
  readonly getKey = async (header: JWSHeaderParameters, token: FlattenedJWSInput): Promise<CryptoKey> => {
    const now = Date.now();
    if (this.#lastGood && now - this.#lastFailure < this.#cooldownMs) return await this.#lastGood(header, token);
    try {
      return await this.#remote(header, token);
    } catch (err) {
      if (err instanceof errors.JWKSNoMatchingKey) {
        if (now - this.#lastRotationFetch < this.#cooldownMs) throw err;
        this.#lastRotationFetch = now;
        await this.#failing(this.#remote.reload());
        return await this.#remote(header, token);
      }
      if (!unavailable.has(err as object)) throw err;
      this.#lastFailure = now;
      if (!this.#lastGood) throw err;
      try {
        return await this.#lastGood(header, token);
      } catch {
        throw err;
      }
    }
  };

  async #failing(reload: Promise<void>): Promise<void> {
    try {
      await reload;
    } catch (err) {
      if (unavailable.has(err as object)) this.#lastFailure = Date.now();
      throw err;
    }
  }

  /** jose's fetch, with errors that say which key set failed and how (a 503 each). */
  async #fetch(url: string, init: RequestInit, label: string): Promise<Response> {
    const hint =
      `Check that the ${label} key set at ${url} is reachable and that its credential is right; requests are refused until it is.`;
    const fail = (what: string, cause?: unknown) => {
      const err = identityUnavailable(
        `Cannot authenticate request: the ${label} key set at ${url} ${what}`,
        hint,
        cause,
      );
      unavailable.add(err);
      return err;
    };
    let res: Response;
    try {
      res = await fetch(url, init);
    } catch (err) {
      throw fail("is unreachable", err);
    }
    if (!res.ok) {
      await res.body?.cancel();
      throw fail(`answered HTTP ${res.status}`);
    }
    let body: unknown;
    try {
      body = await res.json();
    } catch (err) {
      throw fail("is not JSON", err);
    }
    if (!body || typeof body !== "object" || !Array.isArray((body as { keys?: unknown }).keys)) {
      throw fail('has no "keys" array');
    }
    this.#lastGood = createLocalJWKSet(body as JSONWebKeySet);
    return Response.json(body);
  }
}
