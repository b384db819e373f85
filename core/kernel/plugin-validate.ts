/**
 * Validates plugin objects on registration: shape, kind, hook names, duplicate names and
 * duplicate providers. Third-party plugins go through the same check as built-in ones.
 *
 * The schema below and the `Plugin` type of ./hooks.ts say one shape: `SchemaIsPlugin`
 * fails to compile when either gains, loses or retypes a field the other lacks, so a parsed
 * plugin is a `Plugin` without a cast.
 */
import { z } from "zod";
import { agentcliError, type Diagnostic } from "./errors.ts";
import { PluginsInvalid } from "./errors-data.ts";
import {
  HOOK_MODES,
  type HookName,
  type Hooks,
  type IdentityProviderSpec,
  type IdentityUiSpec,
  type ModelProviderSpec,
  type Plugin,
  type SandboxRuntimeSpec,
} from "./hooks.ts";
import { providerKey } from "./plugin-driver.ts";

/** A function field, typed as the `Plugin` type declares it (zod checks only that it is a function). */
const fn = <T>() => z.custom<T>((v) => typeof v === "function", { message: "must be a function" });
const hooksSchema = z.strictObject(
  Object.fromEntries(Object.keys(HOOK_MODES).map((k) => [k, fn<unknown>().optional()])) as {
    [K in HookName]: z.ZodOptional<z.ZodCustom<Hooks[K], Hooks[K]>>;
  },
);
const common = {
  version: z.string().min(1).optional(),
  name: z.string().regex(/^[a-z0-9][a-z0-9_.@/-]*$/, "must be lower-case letters, digits, _ . @ / -"),
  description: z.string().optional(),
  hooks: hooksSchema.optional(),
};
const capabilities = z.strictObject({ persistentFiles: z.boolean(), network: z.boolean(), gpu: z.boolean() });
const envList = z.array(z.string().regex(/^[A-Z_][A-Z0-9_]*$/, "must be an environment variable name"));

const pluginSchema = z.discriminatedUnion("kind", [
  z.strictObject({
    ...common,
    kind: z.literal("model"),
    model: z.strictObject({
      prefix: z.string().regex(/^[a-z][a-z0-9_-]*$/),
      env: envList,
      unlessEnv: envList.optional(),
      integrationPackage: z.string().min(1),
      defaultModel: z.string().min(1),
      defaultRank: z.number().int().positive().optional(),
      createChatModel: fn<NonNullable<ModelProviderSpec["createChatModel"]>>().optional(),
      createEmbeddings: fn<NonNullable<ModelProviderSpec["createEmbeddings"]>>().optional(),
      prices: z.record(
        z.string().min(1),
        z.strictObject({
          input: z.number().nonnegative(),
          output: z.number().nonnegative(),
          cached_input: z.number().nonnegative().optional(),
        }),
      ).optional(),
    }),
  }),
  z.strictObject({
    ...common,
    kind: z.literal("identity"),
    identity: z.strictObject({
      provider: z.string().min(1),
      env: envList,
      frontendEnv: envList,
      signIn: z.enum(["widget", "email-password", "none"]),
      perUser: z.boolean(),
      public: z.boolean().optional(),
      posture: z.string().min(1),
      postDeploy: fn<NonNullable<IdentityProviderSpec["postDeploy"]>>().optional(),
      ui: z.strictObject({
        module: z.union([z.string().min(1), fn<() => string | Promise<string>>()]),
        settings: fn<NonNullable<IdentityUiSpec["settings"]>>().optional(),
      }).optional(),
    }),
  }),
  z.strictObject({
    ...common,
    kind: z.literal("sandbox"),
    sandbox: z.strictObject({
      provider: z.string().min(1),
      env: envList,
      partnerPackage: z.string().nullable(),
      defaultTemplate: z.string(),
      capabilities,
      workdir: z.string().startsWith("/").optional(),
      beta: z.boolean().optional(),
      envStandIns: envList.optional(),
    }),
  }),
  z.strictObject({
    ...common,
    kind: z.literal("sandbox-runtime"),
    sandboxRuntime: z.strictObject({
      name: z.string().regex(/^[a-z][a-z0-9_-]*$/),
      capabilities,
      workdir: z.string().startsWith("/").optional(),
      check: fn<NonNullable<SandboxRuntimeSpec["check"]>>().optional(),
      warnings: fn<NonNullable<SandboxRuntimeSpec["warnings"]>>().optional(),
    }),
  }),
  z.strictObject({
    ...common,
    kind: z.literal("deploy"),
    deploy: z.strictObject({
      target: z.string().regex(/^[a-z][a-z0-9_-]*$/, "must be lower-case letters, digits, _ -"),
      env: envList,
      envReason: z.string().min(1).optional(),
      installsPackages: z.boolean().optional(),
      sandboxAccess: z.strictObject({ providers: z.array(z.string().min(1)), how: z.string().min(1) }).optional(),
    }),
  }),
  z.strictObject({
    ...common,
    kind: z.literal("compute"),
    compute: z.strictObject({
      type: z.string().regex(/^[a-z][a-z0-9_-]*$/, "must be lower-case letters, digits, _ -"),
    }),
  }),
  z.strictObject({ ...common, kind: z.literal("extension") }),
]);

/** True when A and B are assignable both ways. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** Compiles only while the schema and the `Plugin` type agree (see the top of this file). */
const schemaIsPlugin: Same<z.infer<typeof pluginSchema>, Plugin> = true;
void schemaIsPlugin;

/** Checks a list of plugins; throws one error listing every problem. */
export function validatePlugins(plugins: readonly unknown[], sources: readonly string[]): Plugin[] {
  const problems: Diagnostic[] = [];
  const seenNames = new Map<string, string>();
  const seenProviders = new Map<string, string>();
  const valid: Plugin[] = [];
  plugins.forEach((raw, i) => {
    const source = sources[i] ?? "<plugin>";
    const parsed = pluginSchema.safeParse(raw);
    if (!parsed.success) {
      const label = typeof raw === "object" && raw && "name" in raw
        ? `plugin "${String((raw as { name: unknown }).name)}"`
        : "plugin";
      for (const issue of parsed.error.issues) {
        const path = issue.path.join(".") || "(root)";
        const message = issue.code === "unrecognized_keys"
          ? `${label}: unknown key${issue.keys.length > 1 ? "s" : ""} ${issue.keys.map((k) => `"${k}"`).join(", ")}${
            path === "(root)" ? "" : ` in "${path}"`
          }`
          : issue.code === "invalid_union" && path === "kind"
          ? `${label}: "kind" must be one of "model", "identity", "sandbox", "sandbox-runtime", "deploy", "compute", "extension"`
          : `${label}: "${path}" ${issue.message}`;
        problems.push({
          file: source,
          message,
          hint: "See docs/plugins.md, section The plugin object, for the plugin shape.",
        });
      }
      return;
    }
    const plugin: Plugin = parsed.data;
    const prior = seenNames.get(plugin.name);
    if (prior) {
      problems.push({
        file: source,
        message: `plugin "${plugin.name}" is registered twice (also by ${prior})`,
        hint: "Give the plugin a unique name, or load it once.",
      });
      return;
    }
    seenNames.set(plugin.name, source);
    const providerKey = providerOf(plugin);
    if (providerKey) {
      const other = seenProviders.get(providerKey);
      if (other) {
        problems.push({
          file: source,
          message: `plugin "${plugin.name}" declares ${
            providerKey.replace(":", ' provider "')
          }" which plugin "${other}" already provides`,
          hint: "Each provider name may be declared by one plugin only.",
        });
        return;
      }
      seenProviders.set(providerKey, plugin.name);
    }
    valid.push(plugin);
  });
  if (problems.length) {
    throw agentcliError(PluginsInvalid, { count: problems.length }, { diagnostics: problems });
  }
  return valid;
}

function providerOf(p: Plugin): string | null {
  const declared = providerKey(p);
  return declared ? `${declared.kind}:${declared.key}` : null;
}
