/**
 * The local listener (our extension; the default of a single-machine install): each
 * deployment gets a stable URL (a {@link RevisionProxy}) and its revisions run as
 * `agentcli serve` child processes.
 *
 * Storage: with a PostgreSQL control plane each deployment gets its own schema, so the old
 * and new revision run side by side and the proxy switches once the new one is healthy.
 * With the embedded database the data folder can be open in one process only: the proxy
 * holds new requests, the old revision finishes what it took and stops, the new one starts
 * on the same folder; if it is not healthy the old one is started again. Either way no
 * request fails during a switch.
 *
 * Revision processes bind the listener's host and exit when the control plane dies; each
 * records its pid in `revisions/<id>/serve.pid`, and the first time this process takes up a
 * deployment it stops any recorded one still running (left by a control plane that died), so
 * two processes never serve one data folder.
 */
import process from "node:process";
import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { ComputeDriver, RolloutRequest } from "./contract.ts";
import { RevisionProxy } from "./local-proxy.ts";
import { countSetting } from "../../config/index.ts";
import { DEFAULT_MAX_CONNECTIONS_PER_CLIENT, MAX_CONNECTIONS_PER_CLIENT_VARIABLE } from "../../server/index.ts";
import type { DeploymentRow } from "../api/resources.ts";
import { RevisionProcess, stopRecorded } from "./revision-process.ts";

const DRAIN_MS = 30_000;
/** Variables of the control plane itself that a revision must not inherit. */
const WITHHELD = /^(DATABASE_URL|REDIS_URL|PLATFORM_API_KEY|AGENTCLI_PLATFORM_.*)$/;

interface LocalDeployment {
  proxy: RevisionProxy;
  port: number;
  current: RevisionProcess | null;
}

export interface LocalComputeOptions {
  dataDir: string;
  host: string;
  /** The control plane's PostgreSQL; revisions then get a schema each instead of an embedded database. */
  databaseUrl: string | null;
  /** argv prefix that starts agentcli (default: this same agentcli). */
  command?: string[];
  /**
   * Absolute paths of the third-party plugin files the control plane was started with
   * (`--plugin`, `AGENTCLI_PLUGINS`): every revision process loads exactly these (as its
   * `AGENTCLI_PLUGINS`; a deployment secret of that name cannot change them). Absent: the
   * revision inherits `AGENTCLI_PLUGINS` from this process's environment.
   */
  plugins?: readonly string[];
}

export class LocalCompute implements ComputeDriver {
  readonly kind = "local";
  private readonly opts: LocalComputeOptions;
  private readonly deployments = new Map<string, LocalDeployment>();

  constructor(opts: LocalComputeOptions) {
    this.opts = opts;
  }

  private dir(d: DeploymentRow): string {
    return join(this.opts.dataDir, d.id);
  }

  private schema(d: DeploymentRow): string {
    return `agentcli_d_${d.id.replace(/-/g, "")}`;
  }

  async provision(d: DeploymentRow): Promise<void> {
    await mkdir(join(this.dir(d), "data"), { recursive: true });
    if (this.opts.databaseUrl) {
      const { openSql } = await import("../../storage/index.ts");
      const sql = await openSql({ url: this.opts.databaseUrl, poolSize: 1 });
      try {
        await sql.query(`CREATE SCHEMA IF NOT EXISTS ${this.schema(d)}`);
      } finally {
        await sql.close();
      }
    }
    await this.ensureProxy(d);
  }

  /** The deployment's proxy, on the port it had before when that is still free. */
  private async ensureProxy(d: DeploymentRow): Promise<LocalDeployment> {
    const existing = this.deployments.get(d.id);
    if (existing) return existing;
    await this.stopLeftovers(d);
    const again = this.deployments.get(d.id);
    if (again) return again;
    const portFile = join(this.dir(d), "port");
    const proxy = new RevisionProxy({
      maxConnectionsPerClient: countSetting(
        process.env,
        MAX_CONNECTIONS_PER_CLIENT_VARIABLE,
        DEFAULT_MAX_CONNECTIONS_PER_CLIENT,
        "most connections one client address may hold at once",
        { zero: "no bound" },
      ),
    });
    let port = existsSync(portFile) ? Number(await readFile(portFile, "utf8")) : 0;
    try {
      port = await proxy.listen(port, this.opts.host);
    } catch {
      port = await proxy.listen(0, this.opts.host);
    }
    await mkdir(this.dir(d), { recursive: true });
    await writeFile(portFile, String(port));
    const state: LocalDeployment = { proxy, port, current: null };
    this.deployments.set(d.id, state);
    return state;
  }

  /** Stops revision processes of `d` that a control plane which died left running. */
  private async stopLeftovers(d: DeploymentRow): Promise<void> {
    const revisions = join(this.dir(d), "revisions");
    const ids = await readdir(revisions).catch(() => [] as string[]);
    await Promise.all(ids.map((id) => stopRecorded(join(revisions, id, "serve.pid"))));
  }

  private env(d: DeploymentRow, secrets: Array<{ name: string; value: string }>): Record<string, string> {
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !WITHHELD.test(k)) env[k] = v;
    for (const s of secrets) env[s.name] = s.value;
    // Every connection to a revision comes from its proxy, which bounds clients per address itself.
    env[MAX_CONNECTIONS_PER_CLIENT_VARIABLE] = "0";
    if (this.opts.plugins) {
      if (this.opts.plugins.length) env.AGENTCLI_PLUGINS = this.opts.plugins.join(":");
      else delete env.AGENTCLI_PLUGINS;
    }
    if (this.opts.databaseUrl) {
      const url = new URL(this.opts.databaseUrl);
      url.searchParams.set("options", `-c search_path=${this.schema(d)}`);
      env.DATABASE_URL = url.toString();
    }
    env.AGENTCLI_DEPLOYMENT_ID = d.id;
    return env;
  }

  async rollout(req: RolloutRequest): Promise<{ url: string | null }> {
    const d = req.deployment;
    if (!req.bundle) {
      throw new Error(
        `the local listener runs agentcli bundles only; image "${req.imageUri}" needs a k8s listener (source_config.listener_id)`,
      );
    }
    const state = await this.ensureProxy(d);
    const revDir = join(this.dir(d), "revisions", req.revision.id);
    await mkdir(revDir, { recursive: true });
    const bundlePath = join(revDir, "bundle.tgz");
    await writeFile(bundlePath, req.bundle);
    const next = new RevisionProcess({
      revisionId: req.revision.id,
      bundlePath,
      dataDir: join(this.dir(d), "data"),
      host: this.opts.host,
      env: this.env(d, req.secrets),
      log: (line) => req.log("deploy", line),
      command: this.opts.command,
      pidFile: join(revDir, "serve.pid"),
    });
    const old = state.current;
    const url = `http://${this.opts.host}:${state.port}`;
    req.log("deploy", `starting revision ${req.revision.id}`);
    if (!old || this.opts.databaseUrl) {
      await next.start(req.signal).catch(async (err) => {
        await next.stop();
        throw err;
      });
      state.proxy.switchTo(next.address);
      state.current = next;
      if (old) {
        req.log("deploy", `switched traffic from the previous revision; stopping it once its requests finish`);
        void state.proxy.drain(old.address, DRAIN_MS).then(() => old.stop());
      }
      return { url };
    }
    state.proxy.pause();
    try {
      await state.proxy.drain(old.address, DRAIN_MS);
      await old.stop();
      try {
        await next.start(req.signal);
      } catch (err) {
        await next.stop();
        req.log("deploy", "the new revision is not healthy; restarting the previous one");
        const again = new RevisionProcess(old.opts);
        await again.start();
        state.current = again;
        state.proxy.switchTo(again.address);
        throw err;
      }
      state.proxy.switchTo(next.address);
      state.current = next;
      return { url };
    } finally {
      state.proxy.resume();
    }
  }

  async restore(req: Omit<RolloutRequest, "signal">): Promise<{ url: string | null } | null> {
    const existing = this.deployments.get(req.deployment.id);
    if (existing?.current) return { url: `http://${this.opts.host}:${existing.port}` };
    // Another control-plane replica (sharing the database) runs this deployment's processes.
    if (!existsSync(this.dir(req.deployment))) return null;
    return this.rollout({ ...req, signal: new AbortController().signal });
  }

  async teardown(d: DeploymentRow): Promise<void> {
    const state = this.deployments.get(d.id);
    this.deployments.delete(d.id);
    if (state) {
      await state.current?.stop();
      await state.proxy.close();
    }
    if (this.opts.databaseUrl) {
      const { openSql } = await import("../../storage/index.ts");
      const sql = await openSql({ url: this.opts.databaseUrl, poolSize: 1 });
      try {
        await sql.query(`DROP SCHEMA IF EXISTS ${this.schema(d)} CASCADE`);
      } finally {
        await sql.close();
      }
    }
    await rm(this.dir(d), { recursive: true, force: true });
  }

  /** The process id of a deployment's current revision process (tests). */
  pidOf(deploymentId: string): number | null {
    return this.deployments.get(deploymentId)?.current?.pid ?? null;
  }

  /** The port of a deployment's stable URL (tests). */
  portOf(deploymentId: string): number | null {
    return this.deployments.get(deploymentId)?.port ?? null;
  }

  async close(): Promise<void> {
    const all = [...this.deployments.values()];
    this.deployments.clear();
    await Promise.allSettled(all.map(async (s) => {
      await s.current?.stop();
      await s.proxy.close();
    }));
  }
}
