/**
 * The store's embedding model, named by `AGENTCLI_STORE_EMBEDDINGS` (`provider:model`, e.g.
 * `openai:text-embedding-3-small`) and served by the model provider plugins
 * (`ModelProviderSpec.createEmbeddings`); `AGENTCLI_STORE_INDEX_FIELDS` (comma-separated
 * field paths, default `$`) are the fields embedded when a put names none. Checked at start
 * (an unknown provider, one without embeddings or a missing credential stops it naming the
 * variable); the model itself is built on the first embedding, so start-up stays fast.
 *
 * @example
 * const index = storeIndexFromEnv(process.env, driver); // null without AGENTCLI_STORE_EMBEDDINGS
 */
import { agentcliError, type Env, EnvMismatch, type PluginDriver, userError } from "../kernel/index.ts";
import type { StoreIndex } from "../storage/index.ts";

interface EmbeddingsLike {
  embedDocuments(texts: string[]): Promise<number[][]>;
}

/** The store index configured by the environment, or null (then `query` matches text). */
export function storeIndexFromEnv(env: Env, driver: PluginDriver): StoreIndex | null {
  const spec = env.AGENTCLI_STORE_EMBEDDINGS?.trim();
  if (!spec) return null;
  const colon = spec.indexOf(":");
  const prefix = colon > 0 ? spec.slice(0, colon) : "";
  const model = spec.slice(colon + 1);
  const providers = driver.specs("model");
  const provider = providers.find((p) => p.prefix === prefix);
  if (colon <= 0 || !model || !provider?.createEmbeddings) {
    const able = providers.filter((p) => p.createEmbeddings).map((p) => p.prefix);
    throw agentcliError(EnvMismatch, {
      action: `start with AGENTCLI_STORE_EMBEDDINGS="${spec}"`,
      problem: colon <= 0 || !model
        ? "it is not provider:model"
        : !provider
        ? `no model provider plugin handles "${prefix}"`
        : `the "${prefix}" provider serves no embeddings`,
      fix: `Name an embedding model as provider:model with one of ${
        able.map((p) => `"${p}"`).join(", ") || "no provider loaded"
      }, e.g. "openai:text-embedding-3-small".`,
    });
  }
  const missing = provider.env.filter((v) => !env[v]);
  if (missing.length) {
    throw userError("CREDENTIALS_MISSING", {
      message: `Cannot start with AGENTCLI_STORE_EMBEDDINGS="${spec}": ${missing.join(" and ")} ${
        missing.length > 1 ? "are" : "is"
      } not set`,
      hint: `The "${prefix}" provider needs ${provider.env.join(", ")}.`,
    });
  }
  const fields = (env.AGENTCLI_STORE_INDEX_FIELDS ?? "$").split(",").map((f) => f.trim()).filter(Boolean);
  let built: Promise<EmbeddingsLike> | null = null;
  return {
    model: spec,
    fields: fields.length ? fields : ["$"],
    embed: async (texts) => {
      built ??= provider.createEmbeddings!({ model, env }) as Promise<EmbeddingsLike>;
      built.catch(() => (built = null));
      return (await built).embedDocuments(texts);
    },
  };
}
