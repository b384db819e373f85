/**
 * The one hook interface of agentcli. Every hook point has a `domain:phase` name, takes
 * one options object, and declares how it runs:
 * - "first": plugins are asked in order; the first non-null answer wins (who handles this?).
 * - "sequential": each plugin transforms the previous result (config, bundle).
 *
 * A provider's "first" hook is asked of the plugin whose spec declares the provider's key
 * (`PluginDriver.provider(kind, key)`): a plugin does not compare names itself.
 *
 * A plugin is a plain object made with {@link definePlugin}; providers also declare what
 * config validation needs as data (credential variables, packages, capabilities).
 *
 * @example
 * export default definePlugin({
 *   name: "my-sandbox",
 *   kind: "sandbox",
 *   sandbox: { provider: "my_sandbox", env: ["MY_SANDBOX_KEY"], partnerPackage: "my-sandbox-sdk",
 *              capabilities: { persistentFiles: true, network: true, gpu: false } },
 *   hooks: { "sandbox:create": async (opts) => connect(opts) },
 * });
 * (The sandbox contract, with a full example, is in ./sandbox-contract.ts.)
 */
import type { Diagnostic } from "./errors.ts";
import type { AgentConfig } from "./plugin-config.ts";
import type { Sandbox, SandboxCapabilities, SandboxCreateOptions, SandboxRuntimeSpec } from "./sandbox-contract.ts";
import type { ComputeContext, ComputeDriver } from "./compute-contract.ts";

export type {
  ExecuteOptions,
  ExecuteResult,
  Sandbox,
  SandboxCapabilities,
  SandboxCreateOptions,
  SandboxFileError,
  SandboxRuntimeSpec,
  SandboxScope,
} from "./sandbox-contract.ts";
export { isSandboxNotFound, SandboxNotFoundError } from "./sandbox-contract.ts";
export type {
  CanaryThreads,
  ComputeContext,
  ComputeDatabase,
  ComputeDeployment,
  ComputeDriver,
  ComputeListener,
  ComputeResourceSpec,
  ComputeRevision,
  K8sObject,
  KubeApi,
  RevisionLog,
  RolloutRequest,
} from "./compute-contract.ts";
export { CREATE_ONLY } from "./compute-contract.ts";

export type Env = Readonly<Record<string, string | undefined>>;

/** The authenticated caller of a deployed agent. */
export interface AuthUser {
  /** Stable user id; becomes `config.configurable.graph_auth_user_id` and `metadata.owner`. */
  identity: string;
  /** False for the anonymous handler: such callers get no per-user memory. */
  isAuthenticated: boolean;
  displayName?: string;
  email?: string;
  permissions?: string[];
  /**
   * True when every caller of the provider acts as this one identity (the platform API key):
   * nothing is owned or confined per user then. Set by the authenticator, not by plugins.
   */
  shared?: boolean;
  /**
   * The user as LangGraph custom auth's `authenticate` answered it (identity, display_name,
   * is_authenticated, permissions and its own fields), set by the server only: such a user owns
   * nothing by our rules (`shared`); the auth module's `on` handlers filter and rewrite instead.
   */
  langgraph?: Record<string, unknown>;
}

/**
 * The store behind `/memories/...` (spec 2.8): the shared memory, each user's memory and each
 * subagent's, as JSON values (one per file) under a namespace (a list of labels such as
 * `["<assistant>", "user", "<user id>"]`) and a key (the file's path, e.g. `/AGENTS.md`).
 */
export interface MemoryBackend {
  /** The value at `namespace` + `key`, or null. */
  get(namespace: string[], key: string): Promise<Record<string, unknown> | null>;
  /** Creates or replaces. */
  put(namespace: string[], key: string, value: Record<string, unknown>): Promise<void>;
  /** Removes; removing what is not there is not an error. */
  delete(namespace: string[], key: string): Promise<void>;
  /** The entries of exactly this namespace, in a stable order (by key), a page at a time. */
  list(
    namespace: string[],
    page: { limit: number; offset: number },
  ): Promise<Array<{ key: string; value: Record<string, unknown> }>>;
}

/** What a deploy target reports back; `deploy` prints it. */
export interface DeployResult {
  deploymentId: string;
  revisionId: string;
  /** Where the deployed agent answers, when the target knows (the identity provider's post-deploy steps use it). */
  url: string | null;
  status: string;
  /** Lines for the person who deployed (what was written where, the command that runs it). */
  nextSteps?: string[];
}

/** What `deploy:target` receives. */
export interface DeployTargetOptions {
  /** The `--target` name (default `platform`). */
  target: string;
  /** The deterministic bundle (gzipped ustar, see docs/build.md, "The bundle"). */
  bundle: Uint8Array;
  /** `[agent].name`. */
  name: string;
  /**
   * The deployment's secrets, to be stored exactly (never log them): `.env` values, minus the
   * target's own credentials nothing in the project needs, plus needed ones from the environment
   * (`core/cli/deploy-secrets.ts`; `deploy --dry-run` lists these names).
   */
  secrets: Array<{ name: string; value: string }>;
  /** The project's `.env` under the process environment. */
  env: Env;
  /** The folder holding `agent.toml`; a target that writes files writes under `<projectDir>/.agentcli/`. */
  projectDir: string;
  /** This agentcli's single executable (Linux x64), or null when agentcli runs from Node or Deno sources. */
  executable: string | null;
  /** The agentcli version that built the bundle. */
  version: string;
  log: HookLogger;
  /** Aborted on Ctrl+C: stop waiting and throw. */
  signal?: AbortSignal;
  /**
   * Issue 37 (`deploy --gate`, `--gate-evals`, `--canary`): what the new revision must pass before
   * traffic and its canary share, as the control plane's `release` field takes them. Only targets
   * that run revisions behind checks take it (`platform`); `deploy` refuses it for the others.
   */
  release?: DeployRelease | null;
}

/** A new revision's gates and canary share (`release` of `PATCH /v2/deployments/{id}`). */
export interface DeployRelease {
  gates?: { smoke?: boolean; evals?: Array<Record<string, unknown>> } | null;
  canary_percent?: number | null;
}

export interface HookLogger {
  info(msg: string): void;
  warn(msg: string): void;
}

/** Every hook point, by name. Each takes one options object. */
export interface Hooks {
  /** sequential: adjust or check the parsed config; report problems instead of throwing. */
  "config:load": (
    opts: { config: AgentConfig; projectDir: string; env: Env; report: (d: Diagnostic) => void },
  ) => AgentConfig | void | Promise<AgentConfig | void>;
  /** sequential: add files to the bundle or requirements to its manifest. */
  "bundle:build": (
    opts: {
      files: Map<string, Uint8Array>;
      requires: { plugins: Set<string>; packages: Set<string> };
      config: AgentConfig;
    },
  ) => void | Promise<void>;
  /** first: authenticate a request to a deployed agent; null means "not mine". Throw a 401 user error to refuse. */
  "auth:authenticate": (
    opts: { request: Request; provider: string | null; env: Env; dev: boolean },
  ) => AuthUser | null | undefined | Promise<AuthUser | null | undefined>;
  /**
   * first: create the sandbox of a thread or an assistant, or attach to it again when
   * `sandboxId` is set (the server keeps the mapping). Answer null when the provider is not
   * yours. The contract (file transfer, timeouts, a vanished sandbox) is in ./sandbox-contract.ts.
   */
  "sandbox:create": (opts: SandboxCreateOptions) => Sandbox | null | undefined | Promise<Sandbox | null | undefined>;
  /**
   * first, asked of one plugin (`AGENTCLI_MEMORY`, default the built-in "memory-store"): the
   * store behind `/memories/` and user memory, once per agent graph (each `dev` reload).
   * `serverStore` is the agent server's own database (PGlite or PostgreSQL).
   */
  "memory:backend": (
    opts: { assistantId: string; env: Env; serverStore: MemoryBackend },
  ) => MemoryBackend | null | undefined | Promise<MemoryBackend | null | undefined>;
  /**
   * first: ship a bundle to the deploy target `target` (`agentcli deploy --target`); null
   * means "not mine". Called once per `deploy` (never on `--dry-run`), after validation, the
   * bundle build and the anonymous-auth confirmation. Throw a user error to fail the deploy.
   */
  "deploy:target": (
    opts: DeployTargetOptions,
  ) => DeployResult | null | undefined | Promise<DeployResult | null | undefined>;
  /**
   * first, asked of the plugin whose `compute.type` is the listener type: the compute that runs
   * the control plane's revisions of that type (./compute-contract.ts). Called once per type
   * when the control plane opens; the driver is used until it closes (`close()`).
   */
  "compute:driver": (
    opts: ComputeContext,
  ) => ComputeDriver | null | undefined | Promise<ComputeDriver | null | undefined>;
}

export type HookName = keyof Hooks;
export type HookMode = "first" | "sequential";

/** How each hook runs; the driver reads this, the type above says it. */
export const HOOK_MODES: { readonly [K in HookName]: HookMode } = {
  "config:load": "sequential",
  "bundle:build": "sequential",
  "auth:authenticate": "first",
  "sandbox:create": "first",
  "memory:backend": "first",
  "deploy:target": "first",
  "compute:driver": "first",
};

export type PluginKind = "model" | "identity" | "sandbox" | "sandbox-runtime" | "deploy" | "compute" | "extension";

/** What a model provider needs, as data: the `provider:` prefix, credentials, the integration package. */
export interface ModelProviderSpec {
  prefix: string;
  /** All of these must be set to use the provider. */
  env: string[];
  /** When choosing a default model, the provider is skipped if any of these is set. */
  unlessEnv?: string[];
  integrationPackage: string;
  defaultModel: string;
  /**
   * Takes part in choosing a default model when `[agent].model` is omitted: providers with a
   * rank are tried lowest first, and the first whose credentials are set wins (spec 2.2).
   */
  defaultRank?: number;
  /** Builds a LangChain chat model; loaded lazily so the CLI starts fast. */
  createChatModel?: (opts: { model: string; env: Env }) => Promise<unknown>;
  /** Builds a LangChain `Embeddings` (`embedDocuments`) for the store's semantic search (`AGENTCLI_STORE_EMBEDDINGS`). */
  createEmbeddings?: (opts: { model: string; env: Env }) => Promise<unknown>;
  /**
   * Prices of the provider's models in USD per million tokens, by model name (a name also
   * prices the dated names it begins, `gpt-5` prices `gpt-5-2025-08-07`; `*` prices every
   * model): each usage record's estimated cost. `AGENTCLI_MODEL_PRICES` overrides them.
   */
  prices?: Record<string, ModelPrice>;
}

/** A model's price in USD per million tokens: input, output, and input read from the prompt cache. */
export interface ModelPrice {
  input: number;
  output: number;
  cached_input?: number;
}

export interface IdentityProviderSpec {
  provider: string;
  env: string[];
  /** Browser-facing variables, required only when `[frontend].enabled = true`. */
  frontendEnv: string[];
  /** What the bundled UI offers for this provider. */
  signIn: "widget" | "email-password" | "none";
  /** True when callers are real, distinct users (per-user memory applies). */
  perUser: boolean;
  /**
   * True when anyone with the URL can call the agent, without credentials: `deploy` asks to
   * confirm (or wants `--yes`), and `dev` has no development bypass to announce.
   */
  public?: boolean;
  posture: string;
  /**
   * What a person must do in the provider's dashboard once per deployment URL (allowed
   * domains, redirect URLs), printed after a deploy that reports a URL (spec 5.1).
   */
  postDeploy?: (opts: { url: URL }) => string[];
  /**
   * The provider's sign-in screen in the bundled chat UI (docs/plugins.md, "Sign-in UI"):
   * without it the UI sends no token (clients authenticate themselves).
   */
  ui?: IdentityUiSpec;
}

/** The browser half of an identity provider (the contract is in ../auth/browser.ts). */
export interface IdentityUiSpec {
  /**
   * The browser ES module's JavaScript source (default export: a `BrowserAuthFactory`), or a
   * function returning it; read once, when the UI first asks for it. `browserModule(fn)` makes
   * one from a self-contained function.
   */
  module: string | (() => string | Promise<string>);
  /**
   * The factory's settings, from the project's environment: publishable values only (they are
   * embedded in the public page). Called once per server (or `dev` reload).
   */
  settings?: (env: Env) => Record<string, unknown>;
}

export interface SandboxProviderSpec {
  provider: string;
  env: string[];
  partnerPackage: string | null;
  defaultTemplate: string;
  capabilities: SandboxCapabilities;
  /** The working directory of commands in its sandboxes, told to the model (for example "/home/user"). */
  workdir?: string;
  beta?: boolean;
  /**
   * Variables that stand in for `env`: when one of them is set, `env` is not needed (the
   * control plane gives each revision `AGENTCLI_PLATFORM_SANDBOX_KEY` in place of `PLATFORM_API_KEY`).
   */
  envStandIns?: string[];
}

export interface DeployTargetSpec {
  /** The name `agentcli deploy --target <name>` selects. */
  target: string;
  /** Variables a real deploy needs; a dry run lists the missing ones. */
  env: string[];
  /** Why `env` is needed, for the dry run's "A real deploy would refuse" list. */
  envReason?: string;
  /**
   * The target installs a LangGraph.js project's npm `dependencies` when it builds (a control
   * plane does); without it, `deploy` refuses a project needing packages agentcli does not lend.
   */
  installsPackages?: boolean;
  /**
   * Sandbox providers whose access the target gives each deployment itself, and how (for the
   * dry run): a credential in `env` is then not shipped as a secret for that sandbox. `env`
   * variables are shipped only when the project needs them at run time (`core/cli/deploy-secrets.ts`).
   */
  sandboxAccess?: { providers: string[]; how: string };
}

/** A compute of the control plane (./compute-contract.ts). */
export interface ComputeSpec {
  /** The listener `compute_type` it runs (`local` also runs deployments that name no listener). */
  type: string;
}

interface PluginCommon {
  name: string;
  /** Shown by `agentcli plugins`; a custom executable fills it from the plugin's package.json. */
  version?: string;
  description?: string;
  hooks?: Partial<Hooks>;
}

export type Plugin =
  | (PluginCommon & { kind: "model"; model: ModelProviderSpec })
  | (PluginCommon & { kind: "identity"; identity: IdentityProviderSpec })
  | (PluginCommon & { kind: "sandbox"; sandbox: SandboxProviderSpec })
  | (PluginCommon & { kind: "sandbox-runtime"; sandboxRuntime: SandboxRuntimeSpec })
  | (PluginCommon & { kind: "deploy"; deploy: DeployTargetSpec })
  | (PluginCommon & { kind: "compute"; compute: ComputeSpec })
  | (PluginCommon & { kind: "extension" });

/** Identity helper that types a plugin object. */
export function definePlugin<P extends Plugin>(plugin: P): P {
  return plugin;
}
