/**
 * The packages the single executable lends a LangGraph.js project that does not install them
 * (core/kernel/runtime.ts `providedPackage`): from sources a graph module's import of
 * `@langchain/langgraph` falls back to agentcli's own files; inside the executable those
 * packages are bundled, not files, so the app bundle registers, for each entry point below, the
 * bundled module's namespace (`setProvidedModules`), and the module hooks serve a graph's import
 * of it from there: the same instances the server runs (one `@langchain/core` in the process,
 * which LangGraph's `instanceof` checks need). An entry point not listed here fails to import
 * with `LangGraphPackageEntryUnprovided`, naming it.
 */

/** The entry points lent, each a package name or `package/subpath` of its `exports`. */
export const LENT_ENTRY_POINTS: readonly string[] = [
  ...["", "/web", "/prebuilt", "/channels", "/pregel", "/remote", "/stream", "/zod", "/zod/schema"].map((s) =>
    `@langchain/langgraph${s}`
  ),
  "@langchain/langgraph-checkpoint",
  ...["", "/client", "/auth", "/logging", "/utils", "/stream", "/ui", "/react-ui/server"].map((s) =>
    `@langchain/langgraph-sdk${s}`
  ),
  ...[
    "",
    "/agents",
    "/caches",
    "/callbacks/base",
    "/callbacks/dispatch",
    "/callbacks/manager",
    "/callbacks/promises",
    "/chat_history",
    "/context",
    "/documents",
    "/embeddings",
    "/errors",
    "/example_selectors",
    "/language_models/base",
    "/language_models/chat_models",
    "/language_models/llms",
    "/language_models/structured_output",
    "/load",
    "/load/serializable",
    "/memory",
    "/messages",
    "/messages/tool",
    "/output_parsers",
    "/output_parsers/openai_tools",
    "/outputs",
    "/prompt_values",
    "/prompts",
    "/retrievers",
    "/runnables",
    "/runnables/graph",
    "/singletons",
    "/stores",
    "/tools",
    "/tracers/base",
    "/tracers/console",
    "/utils/async_caller",
    "/utils/env",
    "/utils/function_calling",
    "/utils/json_schema",
    "/utils/stream",
    "/utils/testing",
    "/utils/types",
    "/utils/uuid",
    "/vectorstores",
  ].map((s) => `@langchain/core${s}`),
  "@langchain/openai",
  "@langchain/anthropic",
  "@langchain/google-genai",
  "@langchain/mcp-adapters",
  ...["", "/chat_models/universal", "/tools", "/storage/in_memory"].map((s) => `langchain${s}`),
  ...[
    "",
    "/http-exception",
    "/factory",
    "/cors",
    "/validator",
    "/streaming",
    "/html",
    "/cookie",
    "/bearer-auth",
    "/basic-auth",
    "/jwt",
    "/logger",
    "/secure-headers",
    "/request-id",
    "/timing",
    "/body-limit",
    "/etag",
    "/compress",
    "/context-storage",
    "/adapter",
    "/client",
    "/testing",
    "/tiny",
    "/quick",
    "/combine",
    "/proxy",
    "/timeout",
    "/pretty-json",
    "/csrf",
    "/jsx",
    "/jsx/jsx-runtime",
  ].map((s) => `hono${s}`),
  ...["", "/v3", "/v4", "/mini", "/v4/mini", "/v4/core"].map((s) => `zod${s}`),
];

/**
 * The app bundle's module that registers {@link LENT_ENTRY_POINTS}: `import * as` of each (so
 * esbuild gives them the instances the rest of the bundle imports), then `setProvidedModules`
 * of the runtime (`runtime`, a path relative to the checkout's root, the build's resolveDir).
 */
export function lentPackagesModule(runtime: string): string {
  const lines = [`import { setProvidedModules } from ${JSON.stringify(runtime)};`];
  LENT_ENTRY_POINTS.forEach((spec, i) => lines.push(`import * as m${i} from ${JSON.stringify(spec)};`));
  lines.push(
    `setProvidedModules({ ${LENT_ENTRY_POINTS.map((spec, i) => `${JSON.stringify(spec)}: m${i}`).join(", ")} });`,
  );
  return lines.join("\n");
}
