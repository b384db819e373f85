/**
 * A LangGraph.js project deployed through the real processes: `agentcli platform serve` on a
 * free port with a temporary data folder (its bootstrap key read from its output), copies of
 * a project without node_modules, `agentcli <args>` with that key, and the control plane's API.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { startPlatformServe, until } from "../platform/_harness.ts";
import { ROOT } from "./_dev.ts";

export interface DeployPlatform {
  base: string;
  key: string;
  dataDir: string;
  /** The control plane's output so far. */
  output(): string;
  /** A copy of `source` (absolute) without node_modules, `change` applied to it. */
  project(source: string, change?: (dir: string) => void): string;
  /** `agentcli <args>` in `cwd` with the control plane's key; its exit code and output. */
  agentcli(cwd: string, args: string[]): Promise<{ code: number | null; output: string }>;
  /** A JSON request to the control plane's API. */
  api(method: string, path: string, body?: unknown): Promise<any>;
  /** The revision once it ends (DEPLOYED, or failed). */
  revisionEnd(deploymentId: string, revisionId: string): Promise<any>;
  close(): Promise<void>;
}

export async function startDeployPlatform(): Promise<DeployPlatform> {
  const dataDir = mkdtempSync(join(tmpdir(), "agentcli-lg-deploy-"));
  const projects: string[] = [];
  // How this machine reaches the npm registry (a proxy, its certificate authority): the build's npm needs it.
  const reach = Object.entries(process.env).filter(([k, v]) =>
    v !== undefined &&
    /^(NODE_EXTRA_CA_CERTS|SSL_CERT_(FILE|DIR)|(HTTPS?|NO)_PROXY|npm_config_(registry|cafile|proxy|https_proxy))$/i
      .test(k)
  );
  const env = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...Object.fromEntries(reach) };
  const server = await startPlatformServe({ dataDir, env });
  const base = server.url;
  const key = server.key ?? assert.fail(`no bootstrap key:\n${server.output()}`);
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { "x-api-key": key, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return await res.json();
  };
  return {
    base,
    key,
    dataDir,
    output: server.output,
    project(source, change = () => {}) {
      const dir = mkdtempSync(join(tmpdir(), "agentcli-lg-deploy-project-"));
      cpSync(source, dir, {
        recursive: true,
        filter: (p) => !p.includes("/node_modules") && !p.includes("/.agentcli"),
      });
      change(dir);
      projects.push(dir);
      return dir;
    },
    agentcli(cwd, args) {
      return new Promise((resolve) => {
        const child = spawn(process.execPath, [join(ROOT, "bin/agentcli.js"), ...args], {
          cwd,
          env: { ...env, PLATFORM_API_KEY: key },
          stdio: ["ignore", "pipe", "pipe"],
        });
        let out = "";
        child.stdout.on("data", (d) => (out += d));
        child.stderr.on("data", (d) => (out += d));
        child.on("close", (code) => resolve({ code, output: out }));
      });
    },
    api,
    async revisionEnd(deploymentId, revisionId) {
      const r = await until(
        async () => {
          const rev = await api("GET", `/v2/deployments/${deploymentId}/revisions/${revisionId}`);
          return ["BUILD_FAILED", "DEPLOYED", "DEPLOY_FAILED"].includes(rev.status) ? rev : null;
        },
        "the revision's end",
        3000,
      );
      assert.ok(r);
      return r;
    },
    async close() {
      await server.stop();
      for (const dir of [dataDir, ...projects]) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A LangGraph SDK client of the deployment at `url`: the platform key, and the example's own
 * user token (`Bearer token-alice`) for when its custom auth is served; no retries.
 */
export function deployedClient(cp: DeployPlatform, url: string): Client {
  return new Client({ apiUrl: url, apiKey: cp.key, defaultHeaders: userHeaders(cp), callerOptions: { maxRetries: 0 } });
}

/** The headers of a request to a deployment: the platform key and the example's user token. */
export function userHeaders(cp: DeployPlatform): Record<string, string> {
  return { "x-api-key": cp.key, authorization: "Bearer token-alice" };
}
