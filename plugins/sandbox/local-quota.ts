/**
 * The disk quota of a local sandbox's workspace, enforced without privileges: every process
 * of the sandbox has RLIMIT_FSIZE at the quota (no single file grows past it: the writer gets
 * SIGXFSZ), and while a command runs its workspace's usage is measured every
 * {@link QUOTA_POLL_MS}; a command that makes it grow past the quota is stopped. So the
 * workspace can exceed its quota only by what a command writes between two measurements.
 * A command that starts over the quota still runs (so `rm` can make room) unless it adds more.
 *
 * @example
 * const watch = watchWorkspace(dir, quotaKb, () => killSandbox());
 * ...; const over = await watch.stop(); // true when the command was stopped or usage ended over the quota
 */
import { spawn } from "node:child_process";

/** How often the usage of a workspace is measured while a command runs. */
export const QUOTA_POLL_MS = 1000;

/** Disk usage of `dir` in KB (`du -skx`), or null when it cannot be measured. */
export function usageKb(dir: string): Promise<number | null> {
  return new Promise((resolve) => {
    const du = spawn("du", ["-skx", dir], { stdio: ["ignore", "pipe", "ignore"] });
    let out = "";
    du.stdout.on("data", (b: Buffer) => (out += b.toString()));
    du.on("error", () => resolve(null));
    du.on("close", () => {
      const n = Number.parseInt(out, 10);
      resolve(Number.isFinite(n) ? n : null);
    });
  });
}

/** Watches `dir` while a command runs; `onOver` fires once when it grows past `quotaKb`. */
export function watchWorkspace(dir: string, quotaKb: number, onOver: () => void) {
  let stopped = false;
  let over = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const start = usageKb(dir);
  const exceeded = async () => {
    const [before, now] = [await start, await usageKb(dir)];
    return now !== null && now > quotaKb && now > (before ?? 0);
  };
  const tick = async () => {
    if (stopped) return;
    if (await exceeded()) {
      over = true;
      onOver();
      return;
    }
    if (!stopped) timer = setTimeout(tick, QUOTA_POLL_MS);
  };
  timer = setTimeout(tick, QUOTA_POLL_MS);
  return {
    /** Ends the watch; true when the command was stopped or left the workspace grown past the quota. */
    async stop(): Promise<boolean> {
      stopped = true;
      clearTimeout(timer);
      return over || (await exceeded());
    },
  };
}
