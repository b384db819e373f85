/**
 * A project folder's own registry settings at install time: its `.npmrc` (npm, pnpm, yarn 1),
 * `.yarnrc` (yarn 1) and `.yarnrc.yml` (yarn 2+), bundled by `deploy`
 * (../../kernel/registry-files.ts), are written beside its package.json so its manager reaches
 * the registries they name. A `${VAR}` in them is left for the manager to expand: the variable
 * is given to the manager's process alone, its value a secret of the deployment, and never
 * shown (the install's lines hide it). A variable the deployment lacks fails the build naming
 * the file, the line and the variable; a credential in clear (a bundle not made by `deploy`)
 * fails it too, without its value.
 *
 * Settings that would make the manager read or run something of the control plane (a path, a
 * program, a plugin, another yarn) are left out, and the build log says which.
 *
 * @example
 * const s = projectSettings(files, { shown: "the project", env: { NPM_TOKEN: "…" } });
 * // s.files: [{ name: ".npmrc", text }], s.env: { NPM_TOKEN: "…" }, s.registry: false
 */
import { credentialEntry, literalCredentials, REGISTRY_FILES, variableReferences } from "../../kernel/index.ts";
import { BuildFailure } from "./build.ts";

/** Keys of `.npmrc` / `.yarnrc` naming a file, a folder or a program of the machine the install runs on, or turning scripts on. */
const MACHINE_KEYS = new Set([
  "userconfig",
  "globalconfig",
  "cache",
  "cache-dir",
  "cache-folder",
  "prefix",
  "tmp",
  "cafile",
  "certfile",
  "keyfile",
  "git",
  "shell",
  "script-shell",
  "node-gyp",
  "node-options",
  "init-module",
  "onload-script",
  "store-dir",
  "global-dir",
  "global-bin-dir",
  "state-dir",
  "virtual-store-dir",
  "modules-dir",
  "pnpmfile",
  "global-pnpmfile",
  "yarn-path",
  "ignore-scripts",
  "enable-pre-post-scripts",
]);
/** Top-level keys of `.yarnrc.yml` of the same kind (yarn 2+ runs plugins and `yarnPath` as code). */
const BERRY_MACHINE_KEYS = new Set([
  "yarnPath",
  "plugins",
  "cacheFolder",
  "globalFolder",
  "installStatePath",
  "pnpUnpluggedFolder",
  "virtualFolder",
  "httpsCaFilePath",
  "httpsCertFilePath",
  "httpsKeyFilePath",
  "caFilePath",
  "enableScripts",
  "injectEnvironmentFiles",
]);

/** What the folder's settings give its install. */
export interface ProjectSettings {
  files: Array<{ name: string; text: string }>;
  /** The variables the files reference, from the deployment's secrets. */
  env: Record<string, string>;
  /** Whether `.yarnrc.yml` names its own `npmRegistryServer` (yarn 2+ then keeps it). */
  registry: boolean;
  /** The keys left out, for the build log. */
  dropped: string[];
  /**
   * For pnpm, the credential lines of `.npmrc`, moved out of it: pnpm expands no variable in a
   * credential of a project's `.npmrc`, only in the user's, which the install gives it.
   */
  userConfig: string;
}

const decoder = new TextDecoder();

/** The registry settings files of `dir` ("" the root) among the bundle's files. */
export function registryFiles(
  files: ReadonlyMap<string, Uint8Array>,
  dir: string,
): Array<{ name: string; bytes: Uint8Array }> {
  return REGISTRY_FILES.flatMap((name) => {
    const bytes = files.get(dir ? `${dir}/${name}` : name);
    return bytes ? [{ name, bytes }] : [];
  });
}

/** The folder's settings as its install gets them (see the file comment); throws a {@link BuildFailure} naming what is wrong. */
export function projectSettings(
  found: ReadonlyArray<{ name: string; bytes: Uint8Array }>,
  o: { shown: string; env: Readonly<Record<string, string>>; pnpm: boolean },
): ProjectSettings {
  const out: ProjectSettings = { files: [], env: {}, registry: false, dropped: [], userConfig: "" };
  for (const { name, bytes } of found) {
    const text = decoder.decode(bytes);
    const where = (line: number) => `${name} of ${o.shown}, line ${line}`;
    const literal = literalCredentials(name, text)[0];
    if (literal) {
      throw new BuildFailure(
        `${
          where(literal.line)
        } holds a credential in clear ("${literal.key}"); write a variable ("\${NPM_TOKEN}") and set it as a secret of the deployment`,
      );
    }
    for (const ref of variableReferences(text)) {
      const value = o.env[ref.name];
      if (value === undefined || value === "") {
        throw new BuildFailure(
          `${
            where(ref.line)
          } uses \${${ref.name}}, which is not a secret of the deployment: add ${ref.name} to its secrets (the "env" file of langgraph.json) and deploy again`,
        );
      }
      out.env[ref.name] = value;
    }
    let kept = name === ".yarnrc.yml" ? berrySettings(text, out.dropped) : flatSettings(name, text, out.dropped);
    if (o.pnpm && name === ".npmrc") {
      const lines = kept.split("\n");
      const credential = (l: string) => credentialEntry(".npmrc", l) !== null;
      out.userConfig = lines.filter(credential).join("\n");
      kept = lines.filter((l) => !credential(l)).join("\n");
    }
    if (name === ".yarnrc.yml" && /^npmRegistryServer\s*:/m.test(kept)) out.registry = true;
    out.files.push({ name, text: kept });
  }
  return out;
}

/** `.npmrc` or `.yarnrc` without the keys of {@link MACHINE_KEYS}. */
function flatSettings(name: string, text: string, dropped: string[]): string {
  return text.split(/\r?\n/).filter((line) => {
    const key = line.trim().match(name === ".npmrc" ? /^([^=#;\s]+)\s*=/ : /^["']?([^"'\s#]+)["']?\s/)?.[1];
    if (!key || !MACHINE_KEYS.has(key.toLowerCase())) return true;
    dropped.push(`${name} ${key}`);
    return false;
  }).join("\n");
}

/** `.yarnrc.yml` without the top-level keys of {@link BERRY_MACHINE_KEYS} (and their indented blocks). */
function berrySettings(text: string, dropped: string[]): string {
  let skipping = false;
  return text.split(/\r?\n/).filter((line) => {
    const top = line.match(/^["']?([A-Za-z][A-Za-z0-9]*)["']?\s*:/)?.[1];
    if (top) {
      skipping = BERRY_MACHINE_KEYS.has(top);
      if (skipping) dropped.push(`.yarnrc.yml ${top}`);
    } else if (skipping && line.trim() && !/^\s/.test(line) && !line.startsWith("-")) skipping = false;
    return !skipping;
  }).join("\n");
}
