/** Model provider `groq:`: Groq-hosted open models. */
import { definePlugin } from "../../core/hooks.ts";

export default definePlugin({
  name: "model-groq",
  kind: "model",
  description: "Groq-hosted open models.",
  model: {
    prefix: "groq",
    env: ["GROQ_API_KEY"],
    integrationPackage: "@langchain/groq",
    defaultModel: "llama-3.3-70b-versatile",
  },
});
