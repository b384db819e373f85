/**
 * The `local` compute (our extension; the default of a single-machine install): each
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
import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  agentcliError,
  type ComputeContext,
  type ComputeDeployment,
  type ComputeDriver,
  definePlugin,
  LocalListenerNoImages,
  MAX_CONNECTIONS_PER_CLIENT_VARIABLE,
  type RolloutRequest,
} from "../../core/index.ts";
import { RevisionProxy } from "./local-proxy.ts";
import { RevisionProcess, stopRecorded } from "./revision-process.ts";

const DRAIN_MS = 30_000;
/** Variables of the control plane itself that a revision must not inherit. */
const WITHHELD = /^(DATABASE_URL|REDIS_URL|PLATFORM_API_KEY|AGENTCLI_PLATFORM_.*)$/;

interface LocalDeployment {
  proxy: RevisionProxy;
  port: number;
  current: RevisionProcess | null;
  /** The revision taking a share of new threads beside `current` (issue 37). */
  canary: RevisionProcess | null;
}

/**
 * The compute of the `local` listener type. With `ctx.database` (a PostgreSQL control plane)
 * revisions get a schema each instead of an embedded database. `ctx.plugins`: every revision
 * process loads exactly these (as its `AGENTCLI_PLUGINS`; a deployment secret of that name
 * cannot change them).
 */
export class LocalCompute implements ComputeDriver {
  readonly kind = "local";
  readonly releases = { gates: true, canary: true };
  private readonly opts: ComputeContext;
  private readonly deployments = new Map<string, LocalDeployment>();

  constructor(opts: ComputeContext) {
    this.opts = opts;
  }

  private dir(d: ComputeDeployment): string {
    return join(this.opts.dataDir, d.id);
  }

  private schema(d: ComputeDeployment): string {
    return `agentcli_d_${d.id.replace(/-/g, "")}`;
  }

  async provision(d: ComputeDeployment): Promise<void> {
    await mkdir(join(this.dir(d), "data"), { recursive: true });
    await this.opts.database?.createSchema(this.schema(d));
    await this.ensureProxy(d);
  }

  /** The deployment's proxy, on the port it had before when that is still free. */
  private async ensureProxy(d: ComputeDeployment): Promise<LocalDeployment> {
    const existing = this.deployments.get(d.id);
    if (existing) return existing;
    await this.stopLeftovers(d);
    const again = this.deployments.get(d.id);
    if (again) return again;
    const portFile = join(this.dir(d), "port");
    const proxy = new RevisionProxy({ maxConnectionsPerClient: this.opts.maxConnectionsPerClient });
    let port = existsSync(portFile) ? Number(await readFile(portFile, "utf8")) : 0;
    try {
      port = await proxy.listen(port, this.opts.host);
    } catch {
      port = await proxy.listen(0, this.opts.host);
    }
    await mkdir(this.dir(d), { recursive: true });
    await writeFile(portFile, String(port));
    const state: LocalDeployment = { proxy, port, current: null, canary: null };
    this.deployments.set(d.id, state);
    return state;
  }

  /** Stops revision processes of `d` that a control plane which died left running. */
  private async stopLeftovers(d: ComputeDeployment): Promise<void> {
    const revisions = join(this.dir(d), "revisions");
    const ids = await readdir(revisions).catch(() => [] as string[]);
    await Promise.all(ids.map((id) => stopRecorded(join(revisions, id, "serve.pid"))));
  }

  private env(d: ComputeDeployment, secrets: Array<{ name: string; value: string }>): Record<string, string> {
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(this.opts.env)) if (v !== undefined && !WITHHELD.test(k)) env[k] = v;
    for (const s of secrets) env[s.name] = s.value;
    // Every connection to a revision comes from its proxy, which bounds clients per address itself.
    env[MAX_CONNECTIONS_PER_CLIENT_VARIABLE] = "0";
    if (this.opts.plugins) {
      if (this.opts.plugins.length) env.AGENTCLI_PLUGINS = this.opts.plugins.join(":");
      else delete env.AGENTCLI_PLUGINS;
    }
    if (this.opts.database) {
      const url = new URL(this.opts.database.url);
      url.searchParams.set("options", `-c search_path=${this.schema(d)}`);
      env.DATABASE_URL = url.toString();
    }
    env.AGENTCLI_DEPLOYMENT_ID = d.id;
    return env;
  }

  async rollout(req: RolloutRequest): Promise<{ url: string | null }> {
    const d = req.deployment;
    if (!req.bundle) {
      throw agentcliError(LocalListenerNoImages, { image: String(req.imageUri) });
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
      packages: req.packages ?? null,
      onMoved: (from, to) => {
        req.log("deploy", `revision ${req.revision.id} now serves ${to} (restarted, its port was taken)`);
        state.proxy.retarget(from, to);
      },
    });
    const old = state.current;
    const url = `http://${this.opts.host}:${state.port}`;
    req.log("deploy", `starting revision ${req.revision.id}`);
    if (req.canaryPercent) {
      if (!old || !this.opts.database) throw new Error(canaryRefusal(Boolean(old)));
      await this.startChecked(next, req);
      await this.stopCanary(state);
      state.canary = next;
      state.proxy.startCanary(next.address, {
        percent: req.canaryPercent,
        record: { threads: this.opts.canaryThreads, deploymentId: d.id, revisionId: req.revision.id },
        placed: await this.opts.canaryThreads.count(d.id),
      });
      req.log("deploy", `canary: ${req.canaryPercent}% of new threads go to revision ${req.revision.id}`);
      return { url };
    }
    if (!old || this.opts.database) {
      await this.startChecked(next, req);
      await this.stopCanary(state);
      state.proxy.switchTo(next.address);
      state.current = next;
      if (old) {
        req.log("deploy", `switched traffic from the previous revision; stopping it once its requests finish`);
        void state.proxy.drain(old.address, DRAIN_MS).then(() => old.stop());
      }
      return { url };
    }
    return await this.handOver({ state, old, next, req, url });
  }

  /** Starts a revision process and runs the gate on it; on a failure it is stopped again. */
  private async startChecked(next: RevisionProcess, req: RolloutRequest): Promise<void> {
    try {
      await next.start(req.signal);
      await req.gate?.(`http://${next.address}`);
    } catch (err) {
      await next.stop();
      throw err;
    }
  }

  /**
   * The embedded database opens in one process: the proxy holds requests, the old revision
   * finishes and stops, the new one starts (and passes the gate) on the same folder; on a
   * failure the old one starts again. Held requests then go on; none fails.
   */
  private async handOver(
    o: { state: LocalDeployment; old: RevisionProcess; next: RevisionProcess; req: RolloutRequest; url: string },
  ): Promise<{ url: string }> {
    const { state, old, next, req } = o;
    state.proxy.pause();
    try {
      await state.proxy.drain(old.address, DRAIN_MS);
      await old.stop();
      try {
        await this.startChecked(next, req);
      } catch (err) {
        req.log("deploy", "the new revision did not pass; restarting the previous one");
        const again = new RevisionProcess(old.opts);
        await again.start();
        state.current = again;
        state.proxy.switchTo(again.address);
        throw err;
      }
      state.proxy.switchTo(next.address);
      state.current = next;
      return { url: o.url };
    } finally {
      state.proxy.resume();
    }
  }

  async promote(d: ComputeDeployment, _listener: unknown, revisionId: string): Promise<void> {
    const state = this.deployments.get(d.id);
    const canary = state?.canary;
    if (!state || !canary || canary.opts.revisionId !== revisionId) {
      throw new Error(`revision ${revisionId} is not this deployment's running canary`);
    }
    const old = state.current;
    state.proxy.switchTo(canary.address);
    state.proxy.endCanary();
    state.current = canary;
    state.canary = null;
    if (old) void state.proxy.drain(old.address, DRAIN_MS).then(() => old.stop());
  }

  async abortCanary(d: ComputeDeployment, _listener: unknown, revisionId: string): Promise<void> {
    const state = this.deployments.get(d.id);
    if (!state?.canary || state.canary.opts.revisionId !== revisionId) return;
    await this.stopCanary(state);
  }

  /** Ends a running canary: its threads go back to the serving revision, its process stops once idle. */
  private async stopCanary(state: LocalDeployment): Promise<void> {
    const canary = state.canary;
    if (!canary) return;
    state.canary = null;
    state.proxy.endCanary();
    await state.proxy.drain(canary.address, DRAIN_MS);
    await canary.stop();
  }

  async restore(req: Omit<RolloutRequest, "signal">): Promise<{ url: string | null } | null> {
    const existing = this.deployments.get(req.deployment.id);
    const running = req.canaryPercent ? existing?.canary?.opts.revisionId === req.revision.id : existing?.current;
    if (existing && running) return { url: `http://${this.opts.host}:${existing.port}` };
    // Another control-plane replica (sharing the database) runs this deployment's processes.
    if (!existsSync(this.dir(req.deployment))) return null;
    return this.rollout({ ...req, signal: new AbortController().signal });
  }

  async teardown(d: ComputeDeployment): Promise<void> {
    const state = this.deployments.get(d.id);
    this.deployments.delete(d.id);
    if (state) {
      await state.canary?.stop();
      await state.current?.stop();
      await state.proxy.close();
    }
    await this.opts.database?.dropSchema(this.schema(d));
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
      await s.canary?.stop();
      await s.current?.stop();
      await s.proxy.close();
    }));
  }
}

export default definePlugin({
  name: "compute-local",
  kind: "compute",
  description:
    "Runs the control plane's revisions as agentcli serve processes on its machine, each deployment at a stable URL.",
  compute: { type: "local" },
  hooks: { "compute:driver": (ctx) => new LocalCompute(ctx) },
});

/** Why a canary cannot run here: nothing serves yet, or the embedded database runs one revision at a time. */
function canaryRefusal(serving: boolean): string {
  return serving
    ? "a canary runs the new revision beside the serving one, which needs a PostgreSQL control plane (DATABASE_URL): the embedded database opens in one process at a time"
    : "a canary needs a revision already serving: deploy without --canary first";
}
