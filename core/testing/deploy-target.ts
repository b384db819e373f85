/**
 * The conformance kit for deploy targets (`agentcli/testing`): the target ships a real bundle
 * (one `agentcli deploy` would send) and says so, is chosen for its own target only, never logs
 * a secret, names a missing variable in a user error, and stops when aborted.
 * `start()` brings up what the target deploys to (a local stand-in of the service) and says
 * how to check that a deployment arrived.
 *
 * @example
 * import { deployTargetConformance } from "agentcli/testing";
 * import plugin from "./my-target.ts";
 * deployTargetConformance({ plugin, target: "dir", start: async () => ({ env: { DIR_TARGET_PATH: dir }, received: (r) => readBundle(r), close: async () => {} }) });
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  AgentcliError,
  type DeployResult,
  type Env,
  type Plugin,
  PluginDriver,
  validatePlugins,
} from "../kernel/index.ts";
import { packTar } from "../bundle/index.ts";
import { gzipSync } from "node:zlib";

export interface DeployTargetHarness {
  /** Variables the target needs, pointing at the stand-in. */
  env: Env;
  /** The bundle bytes the stand-in received for this result (null: nothing arrived); `projectDir` is where the deploy ran. */
  received(result: DeployResult, where: { projectDir: string }): Promise<Uint8Array | null>;
  close(): Promise<void>;
}

export interface DeployTargetEntry {
  plugin: Plugin;
  target: string;
  start(): Promise<DeployTargetHarness>;
  /** True when the target waits on something (a remote rollout) that an abort must stop; default false. */
  waits?: boolean;
}

const SECRET = "conformance-secret-value-7f3a";

async function sampleBundle(): Promise<Uint8Array> {
  const enc = new TextEncoder();
  const files = new Map<string, Uint8Array>([
    ["manifest.json", enc.encode(JSON.stringify({ format: "agentcli.bundle/v1", name: "conformance", files: [] }))],
    ["project/AGENTS.md", enc.encode("# Conformance\n")],
  ]);
  return new Uint8Array(gzipSync(packTar(files)));
}

/** Registers the suite for one deploy target plugin. */
export function deployTargetConformance(entry: DeployTargetEntry): void {
  describe(`deploy target conformance: ${entry.target}`, () => {
    const [plugin] = validatePlugins([entry.plugin], [`plugin "${String((entry.plugin as { name?: unknown }).name)}"`]);
    const driver = new PluginDriver([plugin!]);
    const spec = plugin!.kind === "deploy" ? plugin!.deploy : null;

    const dirs: string[] = [];
    const deploy = async (
      h: DeployTargetHarness,
      overrides: { env?: Env; target?: string; signal?: AbortSignal } = {},
    ) => {
      const projectDir = await mkdtemp(join(tmpdir(), "agentcli-deploy-conformance-"));
      dirs.push(projectDir);
      const lines: string[] = [];
      const bundle = await sampleBundle();
      const target = overrides.target ?? entry.target;
      const result = await driver.runProvider("deploy:target", "deploy", target, {
        target,
        bundle,
        name: "conformance",
        secrets: [{ name: "CONFORMANCE_SECRET", value: SECRET }],
        env: overrides.env ?? h.env,
        projectDir,
        executable: null,
        version: "0.0.0-conformance",
        log: { info: (m) => lines.push(m), warn: (m) => lines.push(m) },
        signal: overrides.signal,
      });
      return { result, bundle, lines, projectDir };
    };
    const withTarget = async (fn: (h: DeployTargetHarness) => Promise<void>) => {
      const h = await entry.start();
      try {
        await fn(h);
      } finally {
        await h.close();
        for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
      }
    };

    test("declares the deploy target", () => {
      assert.equal(
        spec?.target,
        entry.target,
        `the plugin's kind must be "deploy" with deploy.target "${entry.target}"`,
      );
      assert.equal(typeof plugin!.hooks?.["deploy:target"], "function", 'hooks["deploy:target"] must ship the bundle');
    });

    test("ships the bundle and reports the deployment", () =>
      withTarget(async (h) => {
        const { result, bundle, projectDir } = await deploy(h);
        assert.ok(result, "the hook answered null for its own target");
        for (const field of ["deploymentId", "revisionId", "status"] as const) {
          assert.equal(typeof result[field], "string", `${field} must be a string`);
        }
        assert.ok(result.url === null || typeof result.url === "string", "url is a string or null");
        assert.deepEqual(await h.received(result, { projectDir }), bundle, "the stand-in did not receive the bundle");
      }));

    test("is not chosen for another target", () =>
      withTarget(async (h) => {
        const { result } = await deploy(h, { target: `not-${entry.target}` });
        assert.equal(result, null);
      }));

    test("never logs a secret value", () =>
      withTarget(async (h) => {
        const { result, lines } = await deploy(h);
        assert.ok(!lines.join("\n").includes(SECRET), "a log line holds the secret");
        assert.ok(!JSON.stringify(result).includes(SECRET), "the result holds the secret");
      }));

    test("a missing variable is a user error naming it", () =>
      withTarget(async (h) => {
        for (const variable of spec?.env ?? []) {
          await assert.rejects(deploy(h, { env: { ...h.env, [variable]: undefined } }), (err: Error) => {
            assert.ok(
              err instanceof AgentcliError && err.code !== "PLUGIN_FAILED",
              `expected a user error, got: ${err.message}`,
            );
            assert.match(err.message, new RegExp(variable));
            return true;
          });
        }
      }));

    if (entry.waits) {
      test("stops when aborted", () =>
        withTarget(async (h) => {
          const abort = new AbortController();
          abort.abort();
          await assert.rejects(deploy(h, { signal: abort.signal }), (err: Error) => err instanceof AgentcliError);
        }));
    }
  });
}
