/**
 * Hosts a fixture project in-process exactly as `agentcli dev`/`serve` do: load and validate
 * the project, build and read its bundle, then `hostBundle` (storage in a temp dir, the deep
 * agent, auth, MCP and A2A) on a free port.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadProject } from "../../core/config/load.ts";
import { buildBundle, readBundle } from "../../core/bundle/bundle.ts";
import { type Host, hostBundle } from "../../core/server/host/agent-host.ts";
import { PluginDriver } from "../../core/kernel/plugin-driver.ts";
import { silentLog } from "../../core/kernel/log.ts";
import { builtinPlugins } from "../../plugins/registry.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

export interface HostedProject {
  url: string;
  host: Host;
  close(): Promise<void>;
}

/** Hosts `tests/fixtures/projects/<name>` with `env` (mode "serve" unless given). */
export async function hostProject(
  name: string,
  env: Record<string, string>,
  mode: "dev" | "serve" = "serve",
): Promise<HostedProject> {
  const dir = join(ROOT, "tests/fixtures/projects", name);
  const driver = new PluginDriver([...builtinPlugins]);
  const project = await loadProject(join(dir, "agent.toml"), { driver, env, requireEnv: false, cwd: dir });
  const { bytes } = await buildBundle(project, { driver, version: "test" });
  const bundle = await readBundle(bytes);
  const dataDir = mkdtempSync(join(tmpdir(), `agentcli-protocols-${name}-`));
  let host: Host;
  try {
    host = await hostBundle({
      bundle,
      driver,
      env: project.env,
      mode,
      dataDir,
      port: 0,
      host: "127.0.0.1",
      log: silentLog,
    });
  } catch (err) {
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  return {
    url: `http://127.0.0.1:${host.listening.port}`,
    host,
    async close() {
      await host.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
