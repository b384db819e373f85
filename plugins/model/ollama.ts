/** Model provider `ollama:`: Local models served by Ollama (OLLAMA_BASE_URL, default http://127.0.0.1:11434). */
import { definePlugin } from "../../core/hooks.ts";

export default definePlugin({
  name: "model-ollama",
  kind: "model",
  description: "Local models served by Ollama (OLLAMA_BASE_URL, default http://127.0.0.1:11434).",
  model: {
    prefix: "ollama",
    env: [],
    integrationPackage: "@langchain/ollama",
    defaultModel: "llama3.2",
  },
});
