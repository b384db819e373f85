/**
 * Cron schedules: standard five-field expressions (minute hour day-of-month month
 * day-of-week, as crontab(5): a day matches when either day field does) read in an IANA
 * timezone (UTC when none), parsed by `croner`.
 *
 * @example
 * nextFiring({ schedule: "30 9 * * 1-5", timezone: "America/New_York" }, new Date()); // the next weekday 09:30 in New York
 */
import { Cron } from "croner";
import { agentcliError, CronScheduleFields, CronScheduleInvalid, CronTimezoneUnknown } from "../../kernel/index.ts";

export interface Schedule {
  schedule: string;
  timezone?: string | null;
}

function parse(s: Schedule): Cron {
  const fields = s.schedule.trim().split(/\s+/);
  if (fields.length !== 5) {
    throw agentcliError(CronScheduleFields, { schedule: s.schedule, count: fields.length });
  }
  if (s.timezone) {
    try {
      new Intl.DateTimeFormat("en-US", { timeZone: s.timezone });
    } catch {
      throw agentcliError(CronTimezoneUnknown, { timezone: s.timezone });
    }
  }
  try {
    return new Cron(fields.join(" "), { paused: true, mode: "5-part", timezone: s.timezone ?? "UTC" });
  } catch (err) {
    const why = (err as Error).message.replace(/^Cron\w*:\s*/, "");
    throw agentcliError(CronScheduleInvalid, { schedule: s.schedule, why });
  }
}

/** Throws a 422 naming the problem when the schedule or its timezone is invalid. */
export function checkSchedule(s: Schedule): void {
  parse(s);
}

/** The first firing strictly after `after`, or null when the schedule never fires again. */
export function nextFiring(s: Schedule, after: Date): Date | null {
  return parse(s).nextRun(after);
}
