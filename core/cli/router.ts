/**
 * `agentcli router --serving <url> --canary <url> --percent <int> --deployment <id> --revision <id>`:
 * the front of a Kubernetes deployment during a canary (issue 37), run by the `k8s` compute's
 * router pods from the agentcli image. It sends `--percent` % of new threads to the canary, each
 * later request of a thread to the revision it was placed on, and everything else to the serving
 * revision (core/server/router/), keeping the threads in the deployment's own PostgreSQL
 * (`DATABASE_URL`). It stops on the first signal.
 */
import { agentcliError, RouterNoDatabase, RouterOptionMissing } from "../kernel/index.ts";
import { type CommandSpec, type FlagSpec, hostFlag, parseArgs, portFlag, renderHelp } from "./args.ts";
import type { CliContext } from "./context.ts";

const url = (what: string) => ({ type: "string", placeholder: "<url>", description: what }) as const;

const spec = {
  name: "router",
  usage:
    "agentcli router --serving <url> --canary <url> --percent <int> --deployment <id> --revision <id> [--port <int>] [--host <addr>]",
  summary:
    "Route a deployment's traffic during a canary (what a Kubernetes canary's router pods run): a share of new threads to the canary, each thread's requests to its revision.\nThe threads are kept in DATABASE_URL's PostgreSQL.",
  positionals: [],
  flags: {
    serving: url("The serving revision's address (http://host[:port])"),
    canary: url("The canary revision's address (http://host[:port])"),
    percent: {
      type: "int",
      placeholder: "<int>",
      min: 1,
      max: 99,
      description: "Percentage of new threads for the canary",
    },
    deployment: { type: "string", placeholder: "<id>", description: "The deployment's id" },
    revision: { type: "string", placeholder: "<id>", description: "The canary revision's id" },
    port: portFlag(8000, "Port to listen on (also $PORT)"),
    host: hostFlag("0.0.0.0"),
  },
} satisfies CommandSpec<Record<string, FlagSpec>>;

export async function run(argv: string[], ctx: CliContext): Promise<number> {
  const { flags, help } = parseArgs(spec, argv);
  if (help) return ctx.io.out(renderHelp(spec)), 0;
  for (const option of ["serving", "canary", "percent", "deployment", "revision"] as const) {
    if (flags[option] === undefined) throw agentcliError(RouterOptionMissing, { option });
  }
  const databaseUrl = ctx.env.DATABASE_URL;
  if (!databaseUrl) throw agentcliError(RouterNoDatabase);
  const [{ openSql }, server, { consoleLog }] = await Promise.all([
    import("../storage/index.ts"),
    import("../server/index.ts"),
    import("../kernel/index.ts"),
  ]);
  const log = consoleLog("router");
  const sql = await openSql({ url: databaseUrl, poolSize: 4 });
  const record = { deploymentId: flags.deployment!, revisionId: flags.revision! };
  await server.prepareCanaryThreads(sql, record);
  const threads = server.pgCanaryThreads(sql);
  const split = new server.CanarySplit({
    percent: flags.percent!,
    record: { ...record, threads },
    placed: await threads.count(record.deploymentId),
  });
  const port = argv.some((a) => a === "--port" || a.startsWith("--port="))
    ? flags.port
    : Number(ctx.env.PORT ?? flags.port);
  const router = await server.startCanaryRouter({
    serving: flags.serving!,
    canary: flags.canary!,
    split,
    host: flags.host,
    port,
  });
  log.info(
    `routing on http://${flags.host}:${router.port}: ${flags.percent}% of new threads to ${flags.canary} (revision ${record.revisionId}), the rest to ${flags.serving}`,
  );
  await new Promise<void>((res) => {
    if (ctx.shutdownSignal.aborted) return res();
    ctx.shutdownSignal.addEventListener("abort", () => res(), { once: true });
  });
  await router.close();
  await sql.close();
  return 0;
}
