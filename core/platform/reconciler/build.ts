/**
 * The "build" of a revision, per source: an `internal_source` upload is unpacked and
 * validated as a bundle; a `repohost` revision is cloned at its ref and built into a bundle;
 * a container image needs no build. A build that fails throws a {@link BuildFailure} whose
 * message is the readable reason shown on the revision.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { SqlExecutor } from "../../storage/index.ts";
import type { DeploymentRow, RevisionRow } from "../api/resources.ts";
import { getObject } from "../store/objects.ts";
import { getIntegrationById } from "../store/tenancy.ts";
import { cloneAtRef } from "./git-source.ts";
import { agentNameFor, type AgentTemplate } from "./templates.ts";

export class BuildFailure extends Error {}

/** Builders of agent projects, injected by the CLI (they need the plugins, which `core/platform` does not import). */
export interface ProjectBuilders {
  /** Bundles the agent project in `dir` (an `agent.toml` at `configPath`). */
  buildProject?: (opts: { dir: string; configPath: string; log: (message: string) => void }) => Promise<Uint8Array>;
  /** The templates `internal_template` deployments are built from (see `templates.ts`). */
  templates?: readonly AgentTemplate[];
  /** Why this control plane cannot run a bundle (a plugin it lacks), or null. */
  checkBundle?: (manifest: { name: string; requires: { plugins: string[] } }) => Promise<string | null>;
}

export interface BuildResult {
  bundle: Uint8Array | null;
  imageUri: string | null;
  commitSha?: string;
}

/** Reads and validates bundle bytes; the reason of a failure becomes the build's. */
export async function validateBundle(
  bytes: Uint8Array,
  log: (m: string) => void,
  check?: ProjectBuilders["checkBundle"],
): Promise<void> {
  let mod: { readBundle: (b: Uint8Array) => unknown };
  let manifest: { name: string; requires: { plugins: string[] } } | undefined;
  try {
    mod = await import("../../bundle/index.ts");
  } catch (err) {
    throw new BuildFailure(`bundle reader unavailable: ${err instanceof Error ? err.message : String(err)}`);
  }
  try {
    const bundle = (await mod.readBundle(bytes)) as {
      manifest: { name: string; agentcli: string; files: unknown[]; requires: { plugins: string[] } };
    };
    const m = bundle.manifest;
    manifest = m;
    log(
      `bundle "${m.name}" made by agentcli ${m.agentcli}: ${m.files.length} files, plugins ${
        m.requires.plugins.join(", ") || "(none)"
      }`,
    );
  } catch (err) {
    throw new BuildFailure(`invalid bundle: ${err instanceof Error ? err.message : String(err)}`);
  }
  // A LangGraph.js project's npm packages are installed after this, by the rollout (./packages.ts).
  const problem = check ? await check(manifest!) : null;
  if (problem) throw new BuildFailure(problem);
}

export async function buildRevision(opts: {
  db: SqlExecutor;
  deployment: DeploymentRow;
  revision: RevisionRow;
  builders: ProjectBuilders;
  workDir: string;
  log: (message: string) => void;
}): Promise<BuildResult> {
  const { revision: r, log } = opts;
  const rc = r.source_revision_config;
  switch (r.source) {
    case "internal_source": {
      const object = rc.source_tarball_path ? await getObject(opts.db, rc.source_tarball_path) : null;
      if (!object?.bytes) throw new BuildFailure(`upload "${rc.source_tarball_path}" is missing or empty`);
      const bytes = new Uint8Array(object.bytes);
      log(`unpacking upload "${rc.source_tarball_path}" (${bytes.byteLength} bytes)`);
      await validateBundle(bytes, log, opts.builders.checkBundle);
      return { bundle: bytes, imageUri: null };
    }
    case "repohost": {
      const integration = opts.deployment.source_config.integration_id
        ? await getIntegrationById(opts.db, opts.deployment.source_config.integration_id)
        : null;
      const repoUrl = opts.deployment.source_config.repo_url!;
      log(`cloning ${repoUrl} at "${rc.repo_ref}"`);
      const checkout = await cloneAtRef({
        repoUrl,
        ref: rc.repo_ref!,
        token: integration?.token ?? null,
        workDir: opts.workDir,
      }).catch((err: Error) => {
        throw new BuildFailure(err.message);
      });
      try {
        log(`checked out commit ${checkout.sha}`);
        if (!opts.builders.buildProject) {
          throw new BuildFailure("this control plane has no project builder (start it with `agentcli platform serve`)");
        }
        const configPath = rc.graph_config_path ?? "agent.toml";
        const bytes = await opts.builders.buildProject({ dir: checkout.dir, configPath, log }).catch((err: Error) => {
          throw err instanceof BuildFailure ? err : new BuildFailure(err.message);
        });
        await validateBundle(bytes, log, opts.builders.checkBundle);
        return { bundle: bytes, imageUri: null, commitSha: checkout.sha };
      } finally {
        await checkout.cleanup();
      }
    }
    case "internal_template": {
      const name = opts.deployment.source_config.template!;
      const template = opts.builders.templates?.find((t) => t.name === name);
      if (!template) throw new BuildFailure(`this control plane has no template "${name}"`);
      if (!opts.builders.buildProject) {
        throw new BuildFailure("this control plane has no project builder (start it with `agentcli platform serve`)");
      }
      await mkdir(opts.workDir, { recursive: true });
      const dir = await mkdtemp(join(opts.workDir, "template-"));
      try {
        const files = template.files(agentNameFor(opts.deployment.name));
        for (const f of files) {
          await mkdir(dirname(join(dir, f.path)), { recursive: true });
          await writeFile(join(dir, f.path), f.content);
        }
        log(`template "${name}": ${files.length} files`);
        const bytes = await opts.builders.buildProject({ dir, configPath: join(dir, "agent.toml"), log }).catch(
          (err: Error) => {
            throw err instanceof BuildFailure ? err : new BuildFailure(err.message);
          },
        );
        await validateBundle(bytes, log, opts.builders.checkBundle);
        return { bundle: bytes, imageUri: null };
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    }
    case "external_container":
    case "internal_container":
      log(`image ${rc.image_uri}: nothing to build`);
      return { bundle: null, imageUri: rc.image_uri ?? null };
    default:
      throw new BuildFailure(`cannot build source "${r.source}"`);
  }
}
