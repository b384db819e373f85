/**
 * Encryption at rest with LangGraph's variables: `LANGGRAPH_AES_KEY` (a 16, 24 or 32-byte key:
 * AES-128, -192 or -256, here in GCM mode) encrypts checkpoints, pending writes, store values,
 * run inputs, thread state and the stream log before they reach the database;
 * `LANGGRAPH_AES_JSON_KEYS` (comma-separated) names metadata keys encrypted too, wherever they
 * appear in thread, run and assistant metadata (they can no longer be searched or filtered).
 *
 * Rotation: every value is sealed in an envelope that names its key (the first 8 bytes of
 * the key's SHA-256), so after moving the old key to `LANGGRAPH_AES_PREVIOUS_KEYS`
 * (comma-separated) and setting a new `LANGGRAPH_AES_KEY`, old values stay readable and new
 * ones use the new key.
 *
 * Envelope: `0x01 | key id (8) | nonce (12) | ciphertext | tag (16)`. In a bytea column it is
 * the bytes (the value's type gets a `+aes` suffix, as LangGraph's `EncryptedSerializer`); in
 * a jsonb column `{"$aes": "<base64>"}`; in a text column `aes:<base64>` (JSON text never
 * starts with `a`).
 *
 * @example
 * const enc = encryptionFromEnv(process.env); // null without LANGGRAPH_AES_KEY
 * const sealed = enc?.sealJson({ secret: 1 });
 */
import { Buffer } from "node:buffer";
import {
  type CipherGCM,
  type CipherGCMTypes,
  createCipheriv,
  createDecipheriv,
  createHash,
  type DecipherGCM,
  randomBytes,
} from "node:crypto";
import { AesKeyLength, agentcliError, EnvMismatch } from "../kernel/index.ts";

const VERSION = 1;
const ID_BYTES = 8;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const HEADER = 1 + ID_BYTES + NONCE_BYTES;
/** The jsonb form's one member. */
export const JSON_MARK = "$aes";
const TEXT_MARK = "aes:";

/** Metadata keys the server itself reads and filters on: never encrypted. */
const SYSTEM_KEYS = new Set([
  "owner",
  "graph_id",
  "assistant_id",
  "thread_id",
  "run_id",
  "created_by",
  "langgraph_version",
  "langgraph_api_version",
  "langgraph_plan",
  "langgraph_host",
  "langgraph_api_url",
  "langgraph_request_id",
  "langgraph_auth_user_id",
  "langgraph_auth_permissions",
]);

interface Key {
  id: Buffer;
  bytes: Buffer;
  algorithm: CipherGCMTypes;
}

/** The cipher of one server or control plane: seal with the current key, open with any configured one. */
export class AtRestEncryption {
  readonly #current: Key;
  readonly #keys = new Map<string, Key>();
  /** Metadata keys to encrypt (`LANGGRAPH_AES_JSON_KEYS`). */
  readonly jsonKeys: ReadonlySet<string>;

  /** Keys as raw bytes (16, 24 or 32 each); the first seals, all open. */
  constructor(keys: Uint8Array[], jsonKeys: Iterable<string> = []) {
    if (keys.length === 0) throw new Error("AtRestEncryption needs a key");
    for (const raw of keys) {
      const bytes = Buffer.from(raw);
      if (![16, 24, 32].includes(bytes.length)) {
        throw new Error(`An AES key must be 16, 24 or 32 bytes, not ${bytes.length}`);
      }
      const key = {
        id: createHash("sha256").update(bytes).digest().subarray(0, ID_BYTES),
        bytes,
        algorithm: `aes-${bytes.length * 8}-gcm` as CipherGCMTypes,
      };
      if (!this.#keys.has(key.id.toString("hex"))) this.#keys.set(key.id.toString("hex"), key);
    }
    this.#current = this.#keys.values().next().value!;
    this.jsonKeys = new Set(jsonKeys);
  }

  /** Encrypts bytes into an envelope. */
  seal(plain: Uint8Array): Uint8Array {
    const k = this.#current;
    const nonce = randomBytes(NONCE_BYTES);
    const cipher: CipherGCM = createCipheriv(k.algorithm, k.bytes, nonce);
    const body = Buffer.concat([cipher.update(plain), cipher.final()]);
    return new Uint8Array(Buffer.concat([Buffer.from([VERSION]), k.id, nonce, body, cipher.getAuthTag()]));
  }

  /** Decrypts an envelope; throws when no configured key made it or it was altered. */
  open(envelope: Uint8Array): Uint8Array {
    const b = Buffer.from(envelope.buffer, envelope.byteOffset, envelope.byteLength);
    if (b.length < HEADER + TAG_BYTES || b[0] !== VERSION) {
      throw new Error("Cannot decrypt a stored value: it is not an agentcli envelope");
    }
    const id = b.subarray(1, 1 + ID_BYTES).toString("hex");
    const k = this.#keys.get(id);
    if (!k) {
      throw new Error(
        `Cannot decrypt a stored value: it was encrypted with a key that is not configured (key id ${id}); add that key to LANGGRAPH_AES_PREVIOUS_KEYS`,
      );
    }
    const decipher: DecipherGCM = createDecipheriv(k.algorithm, k.bytes, b.subarray(1 + ID_BYTES, HEADER));
    decipher.setAuthTag(b.subarray(b.length - TAG_BYTES));
    return new Uint8Array(Buffer.concat([decipher.update(b.subarray(HEADER, b.length - TAG_BYTES)), decipher.final()]));
  }

  /** A JSON value as the jsonb envelope `{"$aes": "<base64>"}`. */
  sealJson(value: unknown): { [JSON_MARK]: string } {
    return {
      [JSON_MARK]: Buffer.from(this.seal(new TextEncoder().encode(JSON.stringify(value ?? null)))).toString("base64"),
    };
  }

  /** Opens a jsonb envelope; any other value (written before encryption was on) is returned as is. */
  openJson<T = unknown>(value: unknown): T {
    if (!isSealedJson(value)) return value as T;
    return JSON.parse(new TextDecoder().decode(this.open(Buffer.from(value[JSON_MARK], "base64"))));
  }

  /** Text (JSON text) as `aes:<base64>`. */
  sealText(text: string): string {
    return TEXT_MARK + Buffer.from(this.seal(new TextEncoder().encode(text))).toString("base64");
  }

  /** Opens `aes:<base64>` text; other text is returned as is. */
  openText(text: string): string {
    return text.startsWith(TEXT_MARK)
      ? new TextDecoder().decode(this.open(Buffer.from(text.slice(TEXT_MARK.length), "base64")))
      : text;
  }

  /** Metadata with the values of `jsonKeys` sealed (the keys stay, so JSONB merges still work). */
  sealKeys<T extends Record<string, unknown>>(metadata: T): T {
    if (this.jsonKeys.size === 0 || !metadata) return metadata;
    let out: Record<string, unknown> | null = null;
    for (const k of this.jsonKeys) {
      if (!(k in metadata) || isSealedJson(metadata[k])) continue;
      out ??= { ...metadata };
      out[k] = this.sealJson(metadata[k]);
    }
    return (out ?? metadata) as T;
  }

  /** Metadata with sealed values opened. */
  openKeys<T extends Record<string, unknown>>(metadata: T): T {
    if (!metadata || typeof metadata !== "object") return metadata;
    let out: Record<string, unknown> | null = null;
    for (const [k, v] of Object.entries(metadata)) {
      if (!isSealedJson(v)) continue;
      out ??= { ...metadata };
      out[k] = this.openJson(v);
    }
    return (out ?? metadata) as T;
  }

  /** The encrypted keys a metadata filter names (a filter on them cannot match). */
  filteredKeys(filter: Record<string, unknown> | undefined): string[] {
    return filter ? Object.keys(filter).filter((k) => this.jsonKeys.has(k)) : [];
  }
}

/** True for the jsonb envelope. */
export function isSealedJson(value: unknown): value is { [JSON_MARK]: string } {
  return value !== null && typeof value === "object" && !Array.isArray(value) &&
    typeof (value as Record<string, unknown>)[JSON_MARK] === "string" &&
    Object.keys(value).length === 1;
}

/**
 * The encryption configured by `LANGGRAPH_AES_KEY`, `LANGGRAPH_AES_PREVIOUS_KEYS` and
 * `LANGGRAPH_AES_JSON_KEYS`, or null without a key. A key of the wrong length, or a JSON key
 * the server reads itself, is a start-up error naming the variable. Keys are the variable's
 * bytes (UTF-8), as LangGraph reads them.
 */
export function encryptionFromEnv(env: Record<string, string | undefined>): AtRestEncryption | null {
  const current = env.LANGGRAPH_AES_KEY;
  const previous = (env.LANGGRAPH_AES_PREVIOUS_KEYS ?? "").split(",").filter((k) => k.length > 0);
  const jsonKeys = (env.LANGGRAPH_AES_JSON_KEYS ?? "").split(",").map((k) => k.trim()).filter(Boolean);
  if (!current) {
    if (previous.length || jsonKeys.length) {
      const name = previous.length ? "LANGGRAPH_AES_PREVIOUS_KEYS" : "LANGGRAPH_AES_JSON_KEYS";
      throw agentcliError(EnvMismatch, {
        action: `start with ${name}`,
        problem: "LANGGRAPH_AES_KEY is not set",
        fix: "Set LANGGRAPH_AES_KEY to the key new data is encrypted with (16, 24 or 32 bytes).",
      });
    }
    return null;
  }
  const keys = [
    ["LANGGRAPH_AES_KEY", current] as const,
    ...previous.map((k, i) => [`LANGGRAPH_AES_PREVIOUS_KEYS (key ${i + 1})`, k] as const),
  ].map(([name, text]) => {
    const bytes = new TextEncoder().encode(text);
    if (![16, 24, 32].includes(bytes.length)) {
      throw agentcliError(AesKeyLength, {
        action: `start with ${name}`,
        sizes: "16, 24 or 32 bytes (AES-128, -192 or -256)",
        length: bytes.length,
      });
    }
    return bytes;
  });
  const system = jsonKeys.filter((k) => SYSTEM_KEYS.has(k));
  if (system.length) {
    throw agentcliError(EnvMismatch, {
      action: "start with LANGGRAPH_AES_JSON_KEYS",
      problem: `${system.map((k) => `"${k}"`).join(", ")} ${
        system.length > 1 ? "are system fields" : "is a system field"
      } the server reads and filters on`,
      fix: `Remove it; these cannot be encrypted: ${[...SYSTEM_KEYS].join(", ")}.`,
    });
  }
  return new AtRestEncryption(keys, jsonKeys);
}
