/**
 * `/runs/crons` (stateless: a new thread per firing) and `/threads/{thread_id}/runs/crons`:
 * create, search, count, update and delete scheduled runs, as LangGraph's API and the SDK's
 * `client.crons` define them. ../../engine/crons/scheduler.ts fires them.
 */
import { type Context, Hono } from "hono";
import { type CronPatch, type CronRecord, cronToWire } from "../../storage/index.ts";
import { pick } from "./assistants.ts";
import {
  type AppEnv,
  checkRunTargets,
  checkSchedule,
  type CronScheduler,
  nextRunDate,
  ownedMetadata,
  ownerOf,
  patchMetadata,
  scopeOf,
  userOf,
} from "../../engine/index.ts";
import { resolveAssistant, type ServerDeps } from "../deps.ts";
import { jsonBody, notFound, parseBody, unprocessable } from "../http/errors.ts";
import { checkMessages } from "../http/limits.ts";
import * as s from "../http/schemas.ts";
import { getThread } from "./threads.ts";

/** The run fields of a cron body: what each firing runs (LangGraph's `payload`). */
const RUN_FIELDS = [
  "input",
  "config",
  "context",
  "interrupt_before",
  "interrupt_after",
  "webhook",
  "multitask_strategy",
  "checkpoint_during",
  "durability",
  "stream_mode",
  "stream_subgraphs",
  "stream_resumable",
] as const;

function runPayload(b: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of RUN_FIELDS) if (b[k] !== undefined) out[k] = b[k];
  return out;
}

function checkEndTime(endTime: string | null | undefined): void {
  if (endTime && Date.parse(endTime) <= Date.now()) {
    throw unprocessable(`Invalid request: end_time "${endTime}" is in the past; the cron would never run`);
  }
}

/** The crons route group, mounted at `/`. */
export function cronRoutes(deps: ServerDeps, scheduler: CronScheduler): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const { storage } = deps;

  const create = async (c: Context<AppEnv>, threadId: string | null) => {
    const b = parseBody(s.cronCreate, await jsonBody(c));
    const user = userOf(c);
    if (threadId !== null) await getThread(deps, c, threadId);
    const assistant = await resolveAssistant(deps, b.assistant_id, { owner: ownerOf(user) });
    checkSchedule(b);
    checkEndTime(b.end_time);
    checkMessages(b.input, "input", deps.limits, { chat: await deps.graphs.readsChatMessages(assistant.graph_id) });
    if (b.webhook) await deps.webhooks.check(b.webhook);
    await checkRunTargets(deps, assistant.graph_id, b as unknown as s.RunCreateBody, threadId, user);
    const timing = {
      schedule: b.schedule.trim().split(/\s+/).join(" "),
      timezone: b.timezone ?? null,
      end_time: b.end_time ? new Date(b.end_time).toISOString() : null,
    };
    const cron = await storage.crons.create({
      cron_id: crypto.randomUUID(),
      assistant_id: assistant.assistant_id,
      thread_id: threadId,
      user_id: ownerOf(user),
      auth_user: user ? { ...user } : null,
      ...timing,
      payload: runPayload(b),
      metadata: ownedMetadata(user, b.metadata),
      on_run_completed: threadId === null ? (b.on_run_completed ?? "delete") : null,
      enabled: b.enabled ?? true,
      next_run_date: nextRunDate(timing, new Date()),
    });
    scheduler.poke();
    return c.json(cronToWire(cron));
  };

  app.post("/runs/crons", (c) => create(c, null));
  app.post("/threads/:thread_id/runs/crons", (c) => create(c, c.req.param("thread_id")));

  app.post("/runs/crons/search", async (c) => {
    const b = parseBody(s.cronSearch, await jsonBody(c));
    const rows = (await storage.crons.search(b, scopeOf(c))).map(cronToWire);
    return c.json(b.select ? rows.map((r) => pick(r, b.select!)) : rows);
  });

  app.post(
    "/runs/crons/count",
    async (c) => c.json(await storage.crons.count(parseBody(s.cronCount, await jsonBody(c)), scopeOf(c))),
  );

  const getCron = async (c: Context<AppEnv>): Promise<CronRecord> => {
    const cron = await storage.crons.get(c.req.param("cron_id")!, scopeOf(c));
    if (!cron) throw notFound("Cron", c.req.param("cron_id")!);
    return cron;
  };

  app.patch("/runs/crons/:cron_id", async (c) => {
    const b = parseBody(s.cronPatch, await jsonBody(c));
    const cron = await getCron(c);
    const timing = {
      schedule: b.schedule ? b.schedule.trim().split(/\s+/).join(" ") : cron.schedule,
      timezone: b.timezone ?? cron.timezone,
      end_time: b.end_time === null ? null : b.end_time ? new Date(b.end_time).toISOString() : cron.end_time,
    };
    checkSchedule(timing);
    if (b.end_time) checkEndTime(b.end_time);
    if (b.input !== undefined && b.input !== null) {
      const assistant = await resolveAssistant(deps, cron.assistant_id, scopeOf(c));
      checkMessages(b.input, "input", deps.limits, { chat: await deps.graphs.readsChatMessages(assistant.graph_id) });
    }
    if (b.webhook) await deps.webhooks.check(b.webhook);
    const payload = { ...cron.payload, ...runPayload(b) };
    if (b.interrupt_before !== undefined || b.interrupt_after !== undefined) {
      const assistant = await resolveAssistant(deps, cron.assistant_id, scopeOf(c));
      await checkRunTargets(deps, assistant.graph_id, b as unknown as s.RunCreateBody, cron.thread_id, userOf(c));
    }
    const enabled = b.enabled ?? cron.enabled;
    const retimed = b.schedule !== undefined || b.timezone !== undefined || b.end_time !== undefined ||
      (enabled && !cron.enabled);
    const patch: CronPatch = {
      ...timing,
      payload,
      enabled,
      ...(b.metadata ? { metadata: { ...cron.metadata, ...patchMetadata(b.metadata) } } : {}),
      ...(b.on_run_completed && cron.thread_id === null ? { on_run_completed: b.on_run_completed } : {}),
      ...(retimed ? { next_run_date: nextRunDate(timing, new Date()) } : {}),
    };
    const updated = await storage.crons.update(cron.cron_id, patch, scopeOf(c));
    if (!updated) throw notFound("Cron", cron.cron_id);
    scheduler.poke();
    return c.json(cronToWire(updated));
  });

  app.delete("/runs/crons/:cron_id", async (c) => {
    if (!(await storage.crons.delete(c.req.param("cron_id"), scopeOf(c)))) {
      throw notFound("Cron", c.req.param("cron_id"));
    }
    return c.body(null, 204);
  });

  return app;
}
