/**
 * The routing rule of a canary (issue 37), shared by the `local` compute's proxy and the
 * `agentcli router` a Kubernetes canary runs: a NEW thread (`POST /threads`) goes to the canary
 * by an exact share of `percent` (not a random one), a request naming a thread
 * (`/threads/<id>/...`) goes where that thread was placed, everything else to the serving
 * revision. Each thread placed on the canary is recorded in a store (`CanaryThreads`) before
 * its creator learns its id; where a thread goes is cached here and read from the store for a
 * thread this router has not seen (it started again, or another router placed it).
 */
import type { CanaryThreads } from "../../kernel/index.ts";

/** Threads whose revision is cached (the oldest is forgotten first; the store still knows). */
const MAX_CACHED_THREADS = 100_000;
/** `/threads/<segment>` paths that name no thread. */
const NOT_THREADS = new Set(["search", "prune", "count"]);

/** Where a canary's threads are recorded: the store, the deployment and the canary's revision. */
export interface CanaryRecord {
  threads: CanaryThreads;
  deploymentId: string;
  revisionId: string;
}

/** Which revision a request goes to; `placing`: a new canary thread, to record once created ({@link CanarySplit.place}). */
export interface CanaryRoute {
  to: "serving" | "canary";
  placing: boolean;
}

export class CanarySplit {
  /** New threads seen and how many went to the canary. */
  private seen: number;
  private placed: number;
  private readonly cached = new Map<string, boolean>();
  readonly percent: number;
  readonly record: CanaryRecord;

  /** `placed`: threads the canary already took (a restart), so its share stays exact. */
  constructor(o: { percent: number; record: CanaryRecord; placed?: number }) {
    this.percent = o.percent;
    this.record = o.record;
    this.placed = o.placed ?? 0;
    this.seen = Math.round((this.placed * 100) / o.percent);
  }

  /** How many new threads the canary took of how many (tests, logs). */
  get state(): { placed: number; seen: number } {
    return { placed: this.placed, seen: this.seen };
  }

  /** Where a request (`method`, `url` path with its query) goes; rejects when the store does not answer. */
  async route(method: string | undefined, url: string | undefined): Promise<CanaryRoute> {
    const path = (url ?? "/").split("?")[0]!;
    const thread = /^\/threads\/([^/]+)/.exec(path)?.[1];
    if (thread && !NOT_THREADS.has(thread)) {
      return { to: (await this.onCanary(decodeURIComponent(thread))) ? "canary" : "serving", placing: false };
    }
    if (method === "POST" && (path === "/threads" || path === "/threads/")) {
      this.seen++;
      if (Math.floor((this.seen * this.percent) / 100) > this.placed) {
        this.placed++;
        return { to: "canary", placing: true };
      }
    }
    return { to: "serving", placing: false };
  }

  /** Records a thread created on the canary (in the store, then here). */
  async place(threadId: string): Promise<void> {
    const { threads, deploymentId, revisionId } = this.record;
    await threads.assign({ deploymentId, revisionId, threadId });
    this.cache(threadId, true);
  }

  /** Whether a thread runs on the canary: cached, else asked of the store (and cached). */
  private async onCanary(threadId: string): Promise<boolean> {
    const known = this.cached.get(threadId);
    if (known !== undefined) return known;
    const { threads, deploymentId, revisionId } = this.record;
    const on = (await threads.revisionOf({ deploymentId, threadId })) === revisionId;
    this.cache(threadId, on);
    return on;
  }

  private cache(threadId: string, on: boolean): void {
    this.cached.set(threadId, on);
    if (this.cached.size > MAX_CACHED_THREADS) this.cached.delete(this.cached.keys().next().value!);
  }
}

/** The id a `POST /threads` answer names, or null (not JSON, no id). */
export function threadIdOf(body: Buffer): string | null {
  try {
    const id = (JSON.parse(body.toString("utf8")) as { thread_id?: unknown }).thread_id;
    return typeof id === "string" ? id : null;
  } catch {
    return null;
  }
}
