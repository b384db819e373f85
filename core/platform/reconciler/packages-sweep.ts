/**
 * Removes installs of npm packages (`<data-dir>/packages/<key>`, ./packages.ts) that no revision
 * the control plane may still run or roll back to uses (../store/revision-packages.ts), once
 * unused for the grace period (`AGENTCLI_PLATFORM_PACKAGES_KEEP_DAYS`). A folder's modification
 * time is its last use: stamped by each build that reuses it and by each sweep that keeps it.
 * The reconciler runs it on its polling, at most every `sweepMs`.
 *
 * Safe against builds running now: a build records its key before it reuses or installs, and
 * the sweep re-reads the kept keys and moves each folder aside under the same lock
 * (`withPackagesLock`); an install in progress (`.<key>.<id>`) is left for a day at least. A
 * removal that fails is logged and tried again by the next sweep; it never fails a rollout.
 *
 * @example
 * await sweepPackages({ db, dir: packagesDir(dataDir), settings, log, onError });
 */
import { randomUUID } from "node:crypto";
import { lstat, readdir, rename, rm, utimes } from "node:fs/promises";
import { join } from "node:path";
import { agentcliError, EnvInvalid } from "../../kernel/index.ts";
import type { SqlDriver } from "../../storage/index.ts";
import { getObject } from "../store/objects.ts";
import { recordPackages, revisionsKeepingPackages, withPackagesLock } from "../store/revision-packages.ts";
import { installPlan, packageSource } from "./packages.ts";

/** How long an unused install stays, and how many revisions that served keep theirs per deployment. */
export interface PackagesSweepSettings {
  keepMs: number;
  keepRevisions: number;
}

const DAY = 24 * 60 * 60 * 1000;

/** Each setting with its variable and default (docs/configuration.md, "Control plane"). */
export const PACKAGES_SWEEP_SETTINGS = {
  keepDays: { env: "AGENTCLI_PLATFORM_PACKAGES_KEEP_DAYS", default: 7 },
  keepRevisions: { env: "AGENTCLI_PLATFORM_PACKAGES_KEEP_REVISIONS", default: 5 },
} as const;

/** The sweep's settings from the environment; a value that is not a number of 0 or more is a user error naming it. */
export function packagesSweepSettings(env: Record<string, string | undefined>): PackagesSweepSettings {
  const read = (s: { env: string; default: number }, whole: boolean): number => {
    const raw = env[s.env]?.trim();
    if (!raw) return s.default;
    const n = Number(raw);
    if (Number.isFinite(n) && n >= 0 && (!whole || Number.isInteger(n))) return n;
    const kind = whole ? "whole number" : "number of days";
    throw agentcliError(EnvInvalid, {
      action: 'run "agentcli platform serve"',
      name: s.env,
      value: raw,
      problem: `is not a ${kind} of 0 or more`,
      fix: `Set ${s.env} to a ${kind} of 0 or more, or unset it for the default (${s.default}).`,
    });
  };
  const { keepDays, keepRevisions } = PACKAGES_SWEEP_SETTINGS;
  return { keepMs: read(keepDays, false) * DAY, keepRevisions: read(keepRevisions, true) };
}

export interface SweepOptions {
  db: SqlDriver;
  /** The packages folder (`packagesDir(dataDir)`). */
  dir: string;
  settings: PackagesSweepSettings;
  /** One line per folder removed. */
  log: (line: string) => void;
  onError: (err: unknown) => void;
}

/** One sweep (see the file comment); the keys of the folders it removed. */
export async function sweepPackages(o: SweepOptions): Promise<string[]> {
  const entries = await readdir(o.dir, { withFileTypes: true }).catch((err: NodeJS.ErrnoException) => {
    if (err.code === "ENOENT") return [];
    throw err;
  });
  const kept = await keptKeys(o);
  if (!kept) return [];
  const now = Date.now();
  const candidates: string[] = [];
  for (const e of entries) {
    if (!e.isDirectory()) continue;
    const path = join(o.dir, e.name);
    const st = await lstat(path).catch(() => null);
    if (!st) continue;
    const age = now - st.mtimeMs;
    if (e.name.startsWith(".trash.")) await remove(o, { path, key: e.name.split(".")[2] ?? e.name });
    // An install in progress, or one a stopped control plane left: gone after a day at least.
    else if (e.name.startsWith(".") && age >= Math.max(o.settings.keepMs, DAY)) await remove(o, { path, key: e.name });
    else if (!/^[0-9a-f]{32}$/.test(e.name)) continue;
    else if (kept.has(e.name)) await utimes(path, new Date(now), new Date(now)).catch((err) => o.onError(err));
    else if (age >= o.settings.keepMs) candidates.push(e.name);
  }
  if (!candidates.length) return [];
  // A build may have named one since: the kept keys again, and each folder moved aside, under the lock builds take.
  const moved = await withPackagesLock(o.db, async (tx) => {
    const still = new Set((await revisionsKeepingPackages(tx, o.settings.keepRevisions)).map((r) => r.packagesKey));
    const out: Array<{ key: string; path: string }> = [];
    for (const key of candidates.filter((k) => !still.has(k))) {
      const path = join(o.dir, `.trash.${key}.${randomUUID().slice(0, 8)}`);
      try {
        await rename(join(o.dir, key), path);
        out.push({ key, path });
      } catch (err) {
        // Another replica sharing this data folder moved it first.
        if ((err as NodeJS.ErrnoException).code !== "ENOENT") notRemoved(o, key, err);
      }
    }
    return out;
  });
  for (const m of moved) await remove(o, m);
  return moved.map((m) => m.key);
}

/**
 * The keys of the installs kept revisions use; a kept revision built before keys were recorded
 * gets its key from its bundle (recorded, once). Null when one cannot be told: nothing is removed.
 */
async function keptKeys(o: SweepOptions): Promise<Set<string> | null> {
  const keys = new Set<string>();
  for (const r of await revisionsKeepingPackages(o.db, o.settings.keepRevisions)) {
    // One in flight records its key before it installs (and then holds the lock).
    if (r.packagesKey !== null || r.inFlight) {
      if (r.packagesKey) keys.add(r.packagesKey);
      continue;
    }
    try {
      const bytes = r.artifactPath ? (await getObject(o.db, r.artifactPath))?.bytes : null;
      const key = bytes ? installPlan(await packageSource(new Uint8Array(bytes)))?.key ?? "" : "";
      await recordPackages(o.db, { revisionId: r.id, key });
      if (key) keys.add(key);
    } catch (err) {
      o.onError(err);
      return null;
    }
  }
  return keys;
}

/** Removes a folder moved aside, logging its size; a failure is logged (the next sweep tries again). */
async function remove(o: SweepOptions, m: { key: string; path: string }): Promise<void> {
  try {
    const bytes = await sizeOf(m.path);
    await rm(m.path, { recursive: true, force: true });
    o.log(
      `removed the npm packages ${m.key.slice(0, 12)} (${
        (bytes / 1024 / 1024).toFixed(1)
      } MiB): no kept revision uses them`,
    );
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") notRemoved(o, m.key, err);
  }
}

/** A removal that failed, logged; the folder stays a candidate, so the next sweep tries again. */
function notRemoved(o: SweepOptions, key: string, err: unknown): void {
  const reason = err instanceof Error ? err.message : String(err);
  o.onError(new Error(`Cannot remove the npm packages "${key}": ${reason} (the next sweep tries again)`));
}

/** The bytes of the files under `path` (links counted as themselves). */
async function sizeOf(path: string): Promise<number> {
  const st = await lstat(path);
  if (!st.isDirectory()) return st.size;
  let total = 0;
  for (const name of await readdir(path)) total += await sizeOf(join(path, name));
  return total;
}
