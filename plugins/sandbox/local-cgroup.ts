/**
 * One cgroup per local sandbox, so its processes are bounded together: memory (the kernel
 * kills a process of the sandbox when they reach it, never the host's), processes and threads,
 * and CPU time. cgroup v2 (most hosts today) and v1 (memory, pids and cpu hierarchies) both
 * work; the server needs to be able to create cgroups: as root, or as a user with a delegated
 * v2 subtree named by `AGENTCLI_SANDBOX_CGROUP`. Without one, {@link detectCgroups} says why
 * and the runtime falls back to per-process limits (see ./local.ts).
 *
 * A sandbox's group is `<parent>/agentcli-sandboxes/<sandbox id>`, made when a command starts,
 * removed (its leftover processes killed) when the last running command of the sandbox ends.
 *
 * @example
 * const cg = detectCgroups(env);
 * if (cg.kind !== "none") { const g = openGroup(cg, id, limits); g.add(pid); ...; await g.release(); }
 */
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import process from "node:process";
import { agentcliError, type Env, SandboxCgroupFailed } from "../../core/index.ts";
import type { Limits } from "./local-limits.ts";

const CONTROLLERS = ["memory", "pids", "cpu"] as const;
type Controller = (typeof CONTROLLERS)[number];
const GROUP_DIR = "agentcli-sandboxes";

/** Where sandbox groups go, or why there are none. */
export type CgroupSupport =
  | { kind: "v2"; parent: string }
  | { kind: "v1"; parents: Record<Controller, string> }
  | { kind: "none"; reason: string };

interface Mount {
  root: string;
  point: string;
  type: string;
  options: string[];
}

function mounts(): Mount[] {
  const out: Mount[] = [];
  for (const line of readFileSync("/proc/self/mountinfo", "utf8").split("\n")) {
    const [left, right] = line.split(" - ");
    if (!right) continue;
    const f = left.split(" ");
    const [type, , superOptions] = right.split(" ");
    if (type === "cgroup" || type === "cgroup2") {
      out.push({ root: f[3], point: f[4].replace(/\\040/g, " "), type, options: superOptions.split(",") });
    }
  }
  return out;
}

/** This process's cgroup path per hierarchy ("0" is v2), relative to the hierarchy's root. */
function ownGroups(): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of readFileSync("/proc/self/cgroup", "utf8").trim().split("\n")) {
    const m = /^(\d+):([^:]*):(.*)$/.exec(line);
    if (m) out.set(m[1] === "0" ? "0" : m[2], m[3]);
  }
  return out;
}

const within = (m: Mount, own: string) =>
  join(m.point, m.root !== "/" && own.startsWith(m.root) ? own.slice(m.root.length) : own);

/** Makes `<dir>/agentcli-sandboxes` (v2: with the controllers enabled for its children); throws when the kernel refuses. */
function ensureParent(parent: string, v2: boolean): void {
  const enable = CONTROLLERS.map((c) => `+${c}`).join(" ");
  if (v2) writeFileSync(join(parent, "..", "cgroup.subtree_control"), enable);
  if (!existsSync(parent)) mkdirSync(parent);
  if (v2) writeFileSync(join(parent, "cgroup.subtree_control"), enable);
}

/** Checks that groups can be made under `dir`, leaving nothing behind; returns their parent. */
function probe(dir: string, v2: boolean): string {
  const parent = join(dir, GROUP_DIR);
  const made = !existsSync(parent);
  ensureParent(parent, v2);
  const test = join(parent, `probe-${process.pid}`);
  try {
    mkdirSync(test);
    rmdirSync(test);
  } finally {
    if (made) tryRmdir(parent);
  }
  return parent;
}

/** Moves this process into `<dir>/agentcli-server` and retries the probe; null (and moved back) when that does not help. */
function moveIntoLeaf(dir: string): string | null {
  const others = read(join(dir, "cgroup.procs")).split("\n").filter((p) => p && Number(p) !== process.pid);
  if (others.length) return null;
  const leaf = join(dir, "agentcli-server");
  try {
    if (!existsSync(leaf)) mkdirSync(leaf);
    writeFileSync(join(leaf, "cgroup.procs"), String(process.pid));
  } catch {
    tryRmdir(leaf);
    return null;
  }
  try {
    return probe(dir, true);
  } catch {
    try {
      writeFileSync(join(dir, "cgroup.procs"), String(process.pid));
      tryRmdir(leaf);
    } catch {
      // stays in the leaf: harmless, it has no limits
    }
    return null;
  }
}

const errText = (err: unknown) => (err as NodeJS.ErrnoException).code ?? (err as Error).message;

/**
 * Finds where this server can make sandbox groups: the v2 subtree `AGENTCLI_SANDBOX_CGROUP`
 * (a path under the cgroup2 mount, or relative to it) or its own v2 group, else its own group
 * in the v1 memory, pids and cpu hierarchies. Cached per setting.
 */
export function detectCgroups(env: Env): CgroupSupport {
  const key = env.AGENTCLI_SANDBOX_CGROUP?.trim() ?? "";
  let found = cache.get(key);
  if (!found) cache.set(key, found = detect(key));
  return found;
}
const cache = new Map<string, CgroupSupport>();

function detect(setting: string): CgroupSupport {
  let all: Mount[];
  let own: Map<string, string>;
  try {
    all = mounts();
    own = ownGroups();
  } catch {
    return { kind: "none", reason: "this system has no /proc/self/cgroup (not Linux?)" };
  }
  const reasons: string[] = [];
  const v2 = all.find((m) => m.type === "cgroup2");
  if (v2) {
    const dir = setting
      ? (isAbsolute(setting) && setting.startsWith(v2.point) ? setting : join(v2.point, setting))
      : within(v2, own.get("0") ?? "/");
    let available: string[] = [];
    try {
      available = readFileSync(join(dir, "cgroup.controllers"), "utf8").trim().split(/\s+/);
    } catch (err) {
      reasons.push(`cgroup v2 group ${dir} cannot be read (${errText(err)})`);
    }
    const missing = CONTROLLERS.filter((c) => !available.includes(c));
    if (available.length && missing.length) {
      reasons.push(`cgroup v2 group ${dir} has no ${missing.join(", ")} controller`);
    } else if (available.length) {
      try {
        return { kind: "v2", parent: probe(dir, true) };
      } catch (err) {
        // v2 lets a group with processes have no controlled children: when the server is the
        // only process of its own group (a delegated scope, a container's main process), it
        // moves into a leaf of its own so its sandboxes' groups can sit beside it.
        const ownGroup = !setting;
        const parent = (err as NodeJS.ErrnoException).code === "EBUSY" && ownGroup ? moveIntoLeaf(dir) : null;
        if (parent) return { kind: "v2", parent };
        reasons.push(`cannot create cgroups under ${dir} (${errText(err)})`);
      }
    }
  }
  if (setting) {
    return {
      kind: "none",
      reason: reasons.join("; ") || `AGENTCLI_SANDBOX_CGROUP="${setting}": no cgroup v2 file system is mounted`,
    };
  }
  const parents: Partial<Record<Controller, string>> = {};
  for (const c of CONTROLLERS) {
    const m = all.find((x) => x.type === "cgroup" && x.options.includes(c));
    const path = [...own].find(([k]) => k.split(",").includes(c))?.[1];
    if (!m || path === undefined) {
      reasons.push(`no cgroup v1 ${c} hierarchy`);
      continue;
    }
    try {
      parents[c] = probe(within(m, path), false);
    } catch (err) {
      reasons.push(`cannot create cgroups under ${within(m, path)} (${errText(err)})`);
    }
  }
  if (CONTROLLERS.every((c) => parents[c])) return { kind: "v1", parents: parents as Record<Controller, string> };
  return { kind: "none", reason: reasons.join("; ") };
}

function tryRmdir(dir: string): boolean {
  try {
    rmdirSync(dir);
    return true;
  } catch {
    return !existsSync(dir);
  }
}

function read(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return "";
  }
}
const counter = (text: string, name: string) => Number(new RegExp(`^${name} (\\d+)$`, "m").exec(text)?.[1] ?? 0);

/** What a group counted so far: processes killed for memory, forks refused at the process limit. */
export interface GroupCounters {
  oomKills: number;
  pidsRefused: number;
}

/** The cgroup of one sandbox while commands of it run. */
export interface SandboxGroup {
  /** Moves a process (before it starts the sandbox) into the group. */
  add(pid: number): void;
  counters(): GroupCounters;
  /** Ends one command's use; the last one kills what is left and removes the group. */
  release(): Promise<void>;
}

interface Shared {
  dirs: string[];
  users: number;
  group: SandboxGroup;
}
const open = new Map<string, Shared>();

/** The group of sandbox `id` with `limits` (made on first use, shared by its concurrent commands). */
export function openGroup(support: Exclude<CgroupSupport, { kind: "none" }>, id: string, limits: Limits): SandboxGroup {
  const key = `${support.kind}:${id}`;
  const existing = open.get(key);
  if (existing) {
    existing.users++;
    return existing.group;
  }
  const memory = Math.floor(limits.memoryMb * 1024 * 1024);
  const period = 100_000;
  const quota = Math.max(1000, Math.round(limits.cpus * period));
  const dirs: string[] = [];
  const files: Record<Controller, string> = { memory: "", pids: "", cpu: "" };
  const set = (file: string, value: string | number, optional = false) => {
    try {
      writeFileSync(file, String(value));
    } catch (err) {
      if (!optional) throw err;
    }
  };
  try {
    for (const p of support.kind === "v2" ? [support.parent] : CONTROLLERS.map((c) => support.parents[c])) {
      ensureParent(p, support.kind === "v2");
    }
    if (support.kind === "v2") {
      const dir = join(support.parent, id);
      if (!existsSync(dir)) mkdirSync(dir);
      dirs.push(dir);
      set(join(dir, "memory.max"), memory);
      set(join(dir, "memory.swap.max"), 0, true);
      set(join(dir, "pids.max"), limits.processes);
      set(join(dir, "cpu.max"), `${quota} ${period}`);
      files.memory = join(dir, "memory.events");
      files.pids = join(dir, "pids.events");
    } else {
      for (const c of CONTROLLERS) {
        const dir = join(support.parents[c], id);
        if (!existsSync(dir)) mkdirSync(dir);
        dirs.push(dir);
      }
      const [mem, pids, cpu] = dirs;
      // memory+swap may never be below memory: around the limit, so a group left by an earlier server can be raised or lowered.
      set(join(mem, "memory.memsw.limit_in_bytes"), memory, true);
      set(join(mem, "memory.limit_in_bytes"), memory);
      set(join(mem, "memory.memsw.limit_in_bytes"), memory, true);
      set(join(pids, "pids.max"), limits.processes);
      set(join(cpu, "cpu.cfs_period_us"), period);
      set(join(cpu, "cpu.cfs_quota_us"), quota);
      files.memory = join(mem, "memory.oom_control");
      files.pids = join(pids, "pids.events");
    }
  } catch (err) {
    for (const d of dirs.reverse()) tryRmdir(d);
    removeParents(support);
    throw agentcliError(SandboxCgroupFailed, { id, reason: errText(err) });
  }
  const shared: Shared = {
    dirs,
    users: 1,
    group: {
      add(pid) {
        for (const d of dirs) writeFileSync(join(d, "cgroup.procs"), String(pid));
      },
      counters: () => ({
        oomKills: counter(read(files.memory), "oom_kill"),
        pidsRefused: counter(read(files.pids), "max"),
      }),
      async release() {
        if (--shared.users > 0) return;
        open.delete(key);
        await removeGroup(dirs, support.kind);
        if (![...open.keys()].some((k) => k.startsWith(`${support.kind}:`))) removeParents(support);
      },
    },
  };
  open.set(key, shared);
  return shared.group;
}

/** The parent groups go when this server has no sandbox group left (another server's keep them). */
function removeParents(support: Exclude<CgroupSupport, { kind: "none" }>): void {
  for (const p of support.kind === "v2" ? [support.parent] : CONTROLLERS.map((c) => support.parents[c])) tryRmdir(p);
}

async function removeGroup(dirs: string[], kind: "v1" | "v2"): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt++) {
    if (kind === "v2" && attempt === 0) {
      try {
        writeFileSync(join(dirs[0], "cgroup.kill"), "1");
      } catch {
        // cgroup.kill is Linux 5.14+; the loop below kills one by one
      }
    }
    for (const d of dirs) {
      for (const pid of read(join(d, "cgroup.procs")).split("\n").filter(Boolean)) {
        try {
          process.kill(Number(pid), "SIGKILL");
        } catch {
          // already gone
        }
      }
    }
    if (dirs.map(tryRmdir).every(Boolean)) return;
    await new Promise((r) => setTimeout(r, 20));
  }
}
