/** Who a run's usage counts for, as its creation recorded it (../runs/create.ts). */
import type { Run } from "../../storage/index.ts";
import type { UsageSubject } from "./limits.ts";

/** The run's recorded subject; a run created without one (a cron's) counts for its owner. */
export function subjectOfRun(run: Pick<Run, "kwargs" | "metadata">): UsageSubject {
  const s = (run.kwargs as { usage_subject?: Partial<UsageSubject> }).usage_subject;
  if (s && typeof s.user === "string") {
    return {
      user: s.user,
      client: typeof s.client === "string" ? s.client : null,
      ...(s.owner ? { owner: true } : {}),
    };
  }
  const owner = run.metadata?.owner;
  return typeof owner === "string"
    ? { user: `user:${owner}`, client: null }
    : { user: "owner", client: null, owner: true };
}
