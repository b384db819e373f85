/**
 * How the checkpointer turns values into stored bytes and back: LangGraph's serializer, with
 * the at-rest key when one is configured (type `<type>+aes`), and the metadata's own form
 * (JSON, its keys sealed one by one so filters still match).
 */
import type { CheckpointMetadata, SerializerProtocol } from "@langchain/langgraph-checkpoint";
import type { AtRestEncryption } from "../encryption.ts";
import { jsonbSafe } from "../jsonb.ts";

const decoder = new TextDecoder();

/** The saver's serializer and its at-rest key, if any. */
export class CheckpointCodec {
  readonly #serde: SerializerProtocol;
  readonly #encryption: AtRestEncryption | null;

  constructor(serde: SerializerProtocol, encryption: AtRestEncryption | null) {
    this.#serde = serde;
    this.#encryption = encryption;
  }

  /** Serializes a value, encrypted when a key is configured. */
  async dump(value: unknown): Promise<[string, Uint8Array]> {
    const [type, bytes] = await this.#serde.dumpsTyped(value);
    return this.#encryption ? [`${type}+aes`, this.#encryption.seal(bytes)] : [type, bytes];
  }

  /** Deserializes a stored value, decrypting an encrypted one (values written without a key stay readable). */
  async load(type: string, data: Uint8Array | string): Promise<any> {
    if (!type.endsWith("+aes")) return this.#serde.loadsTyped(type, toBytes(data));
    if (!this.#encryption) {
      throw new Error("Cannot read a checkpoint: it is encrypted and LANGGRAPH_AES_KEY is not set");
    }
    return this.#serde.loadsTyped(type.slice(0, -4), this.#encryption.open(toBytes(data)));
  }

  /** The metadata's stored bytes: its keys sealed when a key is configured. */
  async dumpMetadata(metadata: CheckpointMetadata): Promise<Uint8Array> {
    const [, bytes] = await this.#serde.dumpsTyped(
      this.#encryption ? this.#encryption.sealKeys(metadata as Record<string, unknown>) : metadata,
    );
    return bytes;
  }

  /** The metadata read back from its stored bytes. */
  async loadMetadata(bytes: Uint8Array | string): Promise<CheckpointMetadata> {
    const metadata: CheckpointMetadata = await this.#serde.loadsTyped("json", toBytes(bytes));
    return this.#encryption && metadata
      ? this.#encryption.openKeys(metadata as Record<string, unknown>) as CheckpointMetadata
      : metadata;
  }
}

export function toBytes(v: Uint8Array | string): Uint8Array {
  return typeof v === "string" ? new TextEncoder().encode(v) : new Uint8Array(v);
}

/** The metadata as JSON text for the `metadata_json` column (filters), or `{}` when it is not JSON. */
export function metadataJson(bytes: Uint8Array): string {
  const text = decoder.decode(bytes);
  try {
    JSON.parse(text);
    return jsonbSafe(text);
  } catch {
    return "{}";
  }
}
