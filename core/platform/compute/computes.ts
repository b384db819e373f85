/**
 * The control plane's computes: one driver per listener type, from the plugins of kind
 * `compute` (each asked once, here, with what a compute may use of the control plane: a
 * `ComputeContext`), and the choice of one for a deployment's listener (none: `local`). The
 * reconciler calls the chosen driver; the drivers are plugins (`plugins/compute/`).
 */
import { join } from "node:path";
import process from "node:process";
import {
  type ComputeContext,
  type ComputeDriver,
  type ComputeListener,
  type PluginDriver,
  selfInvocation,
} from "../../kernel/index.ts";
import { countSetting } from "../../config/index.ts";
import { DEFAULT_MAX_CONNECTIONS_PER_CLIENT, MAX_CONNECTIONS_PER_CLIENT_VARIABLE } from "../../server/index.ts";
import { KubeClient } from "./k8s-client.ts";
import { createRevisionSchema, dropRevisionSchema } from "../store/revision-schemas.ts";
import { assignCanaryThread, canaryRevisionOfThread, countCanaryThreads } from "../store/release-threads.ts";
import type { SqlExecutor } from "../../storage/index.ts";

export interface ComputesOptions {
  /** The plugins: each of kind `compute` runs the listeners of its `compute.type`. */
  driver: PluginDriver;
  /** The control plane's data folder (computes keep deployments' files in `<dataDir>/deployments`). */
  dataDir: string;
  /** The host revisions on this machine bind. */
  host: string;
  databaseUrl: string | null;
  /** Third-party plugin files revisions load (`ComputeContext.plugins`). */
  plugins?: readonly string[];
  /** The argv prefix that starts agentcli (default: this agentcli). */
  command?: string[];
  bundleAccess: ComputeContext["bundleAccess"];
  /** The control plane's store (where canaries' threads are kept). */
  sql: SqlExecutor;
}

export interface Computes {
  /** The listener types the `compute` plugins declare (`compute.type`): the ones a listener may name. */
  types: readonly string[];
  /** The driver of a listener type, when a plugin runs it. */
  get(type: string): ComputeDriver | undefined;
  /** The driver for a deployment's listener (null: `local`); throws when no plugin runs its type. */
  for(listener: Pick<ComputeListener, "compute_type"> | null): ComputeDriver;
  close(): Promise<void>;
}

/** Asks every `compute` plugin for its driver. */
export async function openComputes(opts: ComputesOptions): Promise<Computes> {
  const context = (type: string): ComputeContext => ({
    type,
    dataDir: join(opts.dataDir, "deployments"),
    host: opts.host,
    database: opts.databaseUrl ? revisionDatabase(opts.databaseUrl) : null,
    env: process.env,
    command: opts.command ?? selfInvocation(),
    plugins: opts.plugins,
    maxConnectionsPerClient: countSetting(process.env, MAX_CONNECTIONS_PER_CLIENT_VARIABLE, {
      default: DEFAULT_MAX_CONNECTIONS_PER_CLIENT,
      meaning: "most connections one client address may hold at once",
      zero: "no bound",
    }),
    bundleAccess: opts.bundleAccess,
    kube: (kubeconfig) => KubeClient.fromKubeconfig(kubeconfig),
    canaryThreads: {
      assign: (a) => assignCanaryThread(opts.sql, a),
      revisionOf: (q) => canaryRevisionOfThread(opts.sql, q),
      count: (deploymentId) => countCanaryThreads(opts.sql, deploymentId),
    },
  });
  const drivers = new Map<string, ComputeDriver>();
  try {
    for (const { type } of opts.driver.specs("compute")) {
      const compute = await opts.driver.runProvider(
        { hook: "compute:driver", kind: "compute", key: type },
        context(type),
      );
      if (compute) drivers.set(type, compute);
    }
  } catch (err) {
    await Promise.allSettled([...drivers.values()].map((d) => d.close()));
    throw err;
  }
  return {
    types: opts.driver.specs("compute").map((s) => s.type),
    get: (type) => drivers.get(type),
    for(listener) {
      const type = listener?.compute_type ?? "local";
      const compute = drivers.get(type);
      if (!compute) {
        throw new Error(
          `no compute plugin runs listener type "${type}" (the control plane has ${
            [...drivers.keys()].map((t) => `"${t}"`).join(", ") || "none"
          }); start it with the plugin of kind "compute" that declares it`,
        );
      }
      return compute;
    },
    async close() {
      const all = [...drivers.values()].reverse();
      drivers.clear();
      let first: unknown;
      for (const d of all) await d.close().catch((err) => (first ??= err));
      if (first) throw first;
    },
  };
}

function revisionDatabase(url: string): ComputeContext["database"] {
  return {
    url,
    createSchema: (name) => createRevisionSchema(url, name),
    dropSchema: (name) => dropRevisionSchema(url, name),
  };
}
