/**
 * What every route of the control plane reaches: storage, the server's mode, the
 * reconciler, and the signing secret of upload URLs. The authenticated caller is set on the
 * request context by the auth middleware.
 */
import type { AtRestEncryption, SqlDriver } from "../../storage/index.ts";
import type { Reconciler } from "../reconciler/reconciler.ts";
import type { CommandSessions } from "../sandboxes/commands.ts";
import type { SandboxService } from "../store/sandboxes.ts";
import type { PlatformMode } from "./source-rules.ts";
import type { AgentTemplate } from "../reconciler/templates.ts";
import type { Caller } from "../store/tenancy.ts";
import type { PlatformLimits } from "./limits.ts";

export interface PlatformServices {
  sql: SqlDriver;
  mode: PlatformMode;
  /** Templates accepted as `source_config.template` for `internal_template`. */
  templates: readonly AgentTemplate[];
  reconciler: Reconciler;
  /** The listener types a listener may name: those the `compute` plugins declare. */
  computeTypes: readonly string[];
  /** The cipher of secrets at rest (../store/secrets-at-rest.ts). */
  encryption: AtRestEncryption;
  /** HMAC key of upload URLs. */
  uploadSecret: string;
  /** HMAC key of deployments' bundle tokens (`bundles.ts`). */
  bundleSecret: string;
  /** Address clients reach this server at (for upload URLs); from the request when absent. */
  publicUrl?: string;
  /** Bounds of request bodies and uploads (`limits.ts`). */
  limits: PlatformLimits;
  /** The sandbox API's sandboxes and their running commands. */
  sandboxes: SandboxService;
  commands: CommandSessions;
}

export type PlatformEnv = { Variables: { caller: Caller; maxBodyBytes: number } };
