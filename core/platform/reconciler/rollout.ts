/**
 * One rollout of a revision, started by the reconciler (./reconciler.ts) while it holds the
 * deployment's lease: create (a `repohost` ref resolved to its commit), build (or reuse an
 * earlier build), deploy on the listener's compute, and the switch to DEPLOYED. Each move is
 * guarded by the state this rollout left the revision in, so a revision another replica has
 * meanwhile declared INTERRUPTED stays so, and this rollout stops; a failure marks the revision
 * CREATE_FAILED, BUILD_FAILED or DEPLOY_FAILED with its reason.
 */
import { join } from "node:path";
import type { DeploymentRow, ListenerRow, RevisionRow } from "../api/resources.ts";
import type { RevisionStatus } from "../api/schema.ts";
import type { ComputeDriver } from "../../kernel/index.ts";
import { getObject, putObject } from "../store/objects.ts";
import { appendLog, getRevision, markDeployed, setRevisionStatus } from "../store/revisions.ts";
import { packagesClaim } from "../store/revision-packages.ts";
import { openSecrets } from "../store/secrets-at-rest.ts";
import { getIntegrationById } from "../store/tenancy.ts";
import { BuildFailure, buildRevision } from "./build.ts";
import { resolveRef } from "./git-source.ts";
import { runGates, withGateCredential } from "./gates.ts";
import { installPackages, packageSource } from "./packages.ts";
import { startCanary } from "../store/release.ts";
import type { ReconcilerOptions } from "./reconciler.ts";

/** What one rollout works on: the reconciler's settings, the deployment, its newest revision and where it runs. */
export interface RolloutJob {
  settings: Pick<
    ReconcilerOptions,
    "sql" | "encryption" | "dataDir" | "builders" | "onError" | "platformEnv" | "driver"
  >;
  deployment: DeploymentRow;
  revision: RevisionRow;
  listener: ListenerRow | null;
  compute: ComputeDriver;
  signal: AbortSignal;
}

/** What a build gives the deploy: the bundle (null for an image), the image, the folder of installed npm packages. */
interface Built {
  bundle: Uint8Array | null;
  imageUri: string | null;
  packages: string | null;
}

/** Where the control plane keeps the npm packages its builds installed (./packages.ts), under its data folder. */
export function packagesDir(dataDir: string): string {
  return join(dataDir, "packages");
}

/** Rolls a revision out (see the file comment); resolves when it is DEPLOYED, failed or interrupted. */
export async function rollout(job: RolloutJob): Promise<void> {
  await new Rollout(job).run();
}

/** The rollout was stopped: lost lease, deleted deployment, or the revision moved under it. */
class Interrupted extends Error {}

class Rollout {
  readonly #job: RolloutJob;
  /** The state this rollout left the revision in. */
  #at: RevisionStatus;
  #stage: "create" | "build" | "deploy" = "create";
  #written: Promise<void> = Promise.resolve();

  constructor(job: RolloutJob) {
    this.#job = job;
    this.#at = job.revision.status;
  }

  /** Lines are written one after another, so they keep their order on a pooled PostgreSQL. */
  readonly log = (kind: "build" | "deploy", message: string): void => {
    const { settings, revision: r } = this.#job;
    this.#written = this.#written.then(() => appendLog(settings.sql, { revisionId: r.id, kind, message })).catch(
      (err) => settings.onError?.(err),
    );
  };

  async run(): Promise<void> {
    try {
      if (this.#job.revision.status === "CREATING") await this.#create();
      this.#stage = "build";
      const built = await this.#build();
      this.#stage = "deploy";
      await this.#deploy(built);
    } catch (err) {
      await this.#fail(err);
    }
  }

  async #step(status: RevisionStatus, message: string | null = null): Promise<void> {
    if (this.#job.signal.aborted) throw new Interrupted();
    if (
      !(await setRevisionStatus(this.#job.settings.sql, this.#job.revision.id, { status, message, from: [this.#at] }))
    ) {
      throw new Interrupted();
    }
    this.#at = status;
  }

  async #create(): Promise<void> {
    if (this.#job.revision.source === "repohost") await this.#resolveCommit();
    await this.#step("QUEUED");
  }

  /** A `repohost` revision's ref, pinned to the commit it names now. */
  async #resolveCommit(): Promise<void> {
    const { settings: { sql: db }, deployment: d, revision: r } = this.#job;
    const integration = d.source_config.integration_id
      ? await getIntegrationById(db, d.source_config.integration_id)
      : null;
    const sha = await resolveRef({
      repoUrl: d.source_config.repo_url!,
      ref: r.source_revision_config.repo_ref!,
      token: integration?.token ?? null,
    });
    r.source_revision_config = { ...r.source_revision_config, repo_commit_sha: sha };
    const moved = await setRevisionStatus(db, r.id, {
      status: "CREATING",
      from: [this.#at],
      sourceRevisionConfig: r.source_revision_config,
    });
    if (!moved) throw new Interrupted();
    this.log("build", `ref "${r.source_revision_config.repo_ref}" is commit ${sha}`);
  }

  /**
   * Builds the revision, or reuses the build it names (a rollback); its bundle (null for an
   * image), image, and the npm packages installed for a LangGraph.js project's dependencies.
   */
  async #build(): Promise<Built> {
    const { settings, deployment: d, revision: r } = this.#job;
    const db = settings.sql;
    await this.#step("AWAITING_BUILD");
    await this.#step("BUILDING");
    let bundle: Uint8Array | null = null;
    let imageUri = r.source_revision_config.image_uri ?? null;
    const reused = r.artifact_path ? await getObject(db, r.artifact_path) : null;
    if (reused?.bytes) {
      bundle = new Uint8Array(reused.bytes);
      this.log("build", `reusing the build "${r.artifact_path}"`);
    } else {
      const built = await buildRevision({
        db,
        deployment: d,
        revision: r,
        builders: settings.builders,
        workDir: join(settings.dataDir, "work"),
        log: (m) => this.log("build", m),
      });
      bundle = built.bundle;
      imageUri = built.imageUri;
      if (bundle) {
        const artifactPath = `artifacts/${d.id}/${r.id}.bundle`;
        await putObject(db, { objectPath: artifactPath, tenantId: d.tenant_id, deploymentId: d.id, bytes: bundle });
        await setRevisionStatus(db, r.id, { status: "BUILDING", from: [this.#at], artifactPath });
      }
      if (built.commitSha) {
        await setRevisionStatus(db, r.id, {
          status: "BUILDING",
          from: [this.#at],
          sourceRevisionConfig: { ...r.source_revision_config, repo_commit_sha: built.commitSha },
        });
      }
    }
    const packages = bundle
      ? await installPackages(await packageSource(bundle), {
        cacheDir: packagesDir(settings.dataDir),
        log: (m) => this.log("build", m),
        signal: this.#job.signal,
        claim: packagesClaim(db, r.id),
        // For the \`\${VAR}\` of the project's .npmrc / .yarnrc.yml: the deployment's secrets, never logged.
        env: Object.fromEntries(openSecrets(settings.encryption, r.secrets).map((s) => [s.name, s.value])),
      })
      : null;
    this.log("build", "build finished");
    return { bundle, imageUri, packages };
  }

  /** Runs the build on the listener's compute; once healthy, the revision serves. */
  async #deploy({ bundle, imageUri, packages }: Built): Promise<void> {
    const { settings, deployment: d, revision: r, listener, compute, signal } = this.#job;
    const db = settings.sql;
    const log = this.log;
    await this.#step("AWAITING_DEPLOY");
    await this.#step("DEPLOYING");
    const revision = (await getRevision(db, d.id, r.id))!;
    const secrets = [
      ...openSecrets(settings.encryption, r.secrets),
      ...(await settings.platformEnv?.(d, listener) ?? []),
    ];
    const release = r.release ?? null;
    const canaryPercent = release?.canary_percent ?? null;
    const gates = release?.gates;
    if (canaryPercent && !compute.releases?.canary) {
      throw new Error(`the "${compute.kind}" compute does not run canaries; deploy without a canary share`);
    }
    if (gates && !compute.releases?.gates) {
      throw new Error(`the "${compute.kind}" compute does not check revisions before traffic; deploy without gates`);
    }
    // A gated revision gets a credential of its own for the gates' calls (./gates.ts), never stored.
    const credential = withGateCredential(secrets, Boolean(gates));
    const { url } = await compute.rollout({
      deployment: d,
      revision,
      listener,
      bundle,
      imageUri,
      packages,
      secrets: credential.secrets,
      log,
      signal,
      ...(gates
        ? {
          gate: (at: string) =>
            runGates(at, {
              release: release!,
              log: (m) => log("deploy", m),
              bundle,
              secrets,
              gateToken: credential.token!,
              driver: settings.driver,
            }),
        }
        : {}),
      canaryPercent,
    });
    if (signal.aborted) throw new Interrupted();
    if (canaryPercent) {
      await this.#written;
      if (!(await startCanary(db, { deploymentId: d.id, revisionId: r.id, percent: canaryPercent, url }))) {
        throw new Interrupted();
      }
      return;
    }
    // The rollout's lines first, then DEPLOYED, the active revision and the last line in one
    // transaction: a reader that sees the revision final has every line of it, and the
    // deployment already points at it.
    await this.#written;
    if (!(await markDeployed(db, { deploymentId: d.id, revisionId: r.id, from: this.#at, url }))) {
      throw new Interrupted();
    }
    this.#at = "DEPLOYED";
  }

  async #fail(err: unknown): Promise<void> {
    const { settings, revision: r, signal } = this.#job;
    const db = settings.sql;
    if (err instanceof Interrupted || signal.aborted) {
      await setRevisionStatus(db, r.id, {
        status: "INTERRUPTED",
        from: [this.#at],
        message: "the rollout was interrupted",
      });
      return;
    }
    const stage = this.#stage;
    const reason = err instanceof Error ? err.message : String(err);
    const status: RevisionStatus = stage === "create"
      ? "CREATE_FAILED"
      : stage === "build"
      ? "BUILD_FAILED"
      : "DEPLOY_FAILED";
    await this.#written;
    await appendLog(db, {
      revisionId: r.id,
      kind: stage === "deploy" ? "deploy" : "build",
      message: `${status}: ${reason}`,
    });
    await setRevisionStatus(db, r.id, { status, from: [this.#at], message: reason });
    if (!(err instanceof BuildFailure) && stage !== "deploy" && stage !== "create") settings.onError?.(err);
  }
}
