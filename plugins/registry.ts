/**
 * The built-in plugins, as a static list: a single compiled binary embeds only what is
 * statically imported, so plugins are never discovered by scanning the disk.
 */
import type { Plugin } from "../core/index.ts";
import openai from "./model/openai.ts";
import anthropic from "./model/anthropic.ts";
import googleGenai from "./model/google_genai.ts";
import googleVertexai from "./model/google_vertexai.ts";
import nvidia from "./model/nvidia.ts";
import ollama from "./model/ollama.ts";
import azureOpenai from "./model/azure_openai.ts";
import groq from "./model/groq.ts";
import mistralai from "./model/mistralai.ts";
import openrouter from "./model/openrouter.ts";
import identityA from "./identity/identity_a.ts";
import identityB from "./identity/identity_b.ts";
import anonymous from "./identity/anonymous.ts";
import platformKey from "./identity/platform_key.ts";
import sandboxNone from "./sandbox/none.ts";
import sandboxA from "./sandbox/sandbox_a.ts";
import sandboxB from "./sandbox/sandbox_b.ts";
import sandboxC from "./sandbox/sandbox_c.ts";
import sandboxPlatform from "./sandbox/platform.ts";
import sandboxLocal from "./sandbox/local.ts";
import deployPlatform from "./deploy/platform.ts";
import deployDocker from "./deploy/docker.ts";
import memoryStore from "./memory/store.ts";
import computeLocal from "./compute/local.ts";
import computeK8s from "./compute/kubernetes.ts";

/**
 * Model providers first; the default-model chain of spec 2.2 (openai, anthropic,
 * google_genai, google_vertexai, nvidia) is each provider's `defaultRank`.
 */
export const builtinPlugins: readonly Plugin[] = [
  openai,
  anthropic,
  googleGenai,
  googleVertexai,
  nvidia,
  ollama,
  azureOpenai,
  groq,
  mistralai,
  openrouter,
  identityA,
  identityB,
  anonymous,
  platformKey,
  sandboxNone,
  sandboxA,
  sandboxB,
  sandboxC,
  sandboxPlatform,
  sandboxLocal,
  deployPlatform,
  deployDocker,
  memoryStore,
  computeLocal,
  computeK8s,
];
