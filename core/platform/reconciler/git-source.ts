/**
 * `repohost` sources through the `git` command: resolve a ref to a commit, and clone a
 * repository at a ref into a temporary folder. An integration's token is passed as an HTTP
 * header through git's config, never written into the URL (so it stays out of logs).
 *
 * @example
 * const { dir, sha, cleanup } = await cloneAtRef({ repoUrl, ref: "main", token: null, workDir });
 */
import process from "node:process";
import { Buffer } from "node:buffer";
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { join } from "node:path";

function git(args: string[], opts: { token: string | null; cwd?: string }): Promise<string> {
  const auth = opts.token
    ? ["-c", `http.extraHeader=Authorization: Basic ${Buffer.from(`x-access-token:${opts.token}`).toString("base64")}`]
    : [];
  return new Promise((resolve, reject) => {
    const child = spawn("git", [...auth, ...args], {
      cwd: opts.cwd,
      env: { ...process.env, GIT_TERMINAL_PROMPT: "0", GIT_ASKPASS: "true" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    child.on("error", (e) => reject(new Error(`cannot run git: ${e.message}`)));
    child.on(
      "close",
      (
        code,
      ) => (code === 0
        ? resolve(out)
        : reject(new Error(`git ${args[0]} failed: ${err.trim().split("\n").slice(-3).join(" ") || `exit ${code}`}`))),
    );
  });
}

/** The commit a ref points at, or an error naming the ref. */
export async function resolveRef(opts: { repoUrl: string; ref: string; token: string | null }): Promise<string> {
  if (/^[0-9a-f]{40}$/i.test(opts.ref)) return opts.ref.toLowerCase();
  const out = await git(
    ["ls-remote", "--", opts.repoUrl, opts.ref, `refs/heads/${opts.ref}`, `refs/tags/${opts.ref}`],
    { token: opts.token },
  );
  const line = out.split("\n").find((l) => l.trim());
  if (!line) throw new Error(`ref "${opts.ref}" not found in ${opts.repoUrl}`);
  return line.split(/\s+/)[0]!;
}

/** Clones `repoUrl` at `ref` (a branch, tag or commit) into a new folder under `workDir`. */
export async function cloneAtRef(
  opts: { repoUrl: string; ref: string; token: string | null; workDir: string },
): Promise<{ dir: string; sha: string; cleanup: () => Promise<void> }> {
  await mkdir(opts.workDir, { recursive: true });
  const dir = await mkdtemp(join(opts.workDir, "checkout-"));
  const cleanup = () => rm(dir, { recursive: true, force: true });
  try {
    await git(["init", "-q", dir], { token: null });
    await git(["fetch", "-q", "--depth", "1", "--", opts.repoUrl, opts.ref], { token: opts.token, cwd: dir });
    await git(["-c", "advice.detachedHead=false", "checkout", "-q", "FETCH_HEAD"], { token: null, cwd: dir });
    const sha = (await git(["rev-parse", "HEAD"], { token: null, cwd: dir })).trim();
    return { dir, sha, cleanup };
  } catch (err) {
    await cleanup();
    throw err;
  }
}
