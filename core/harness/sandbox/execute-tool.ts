/**
 * The `execute` tool: one shell command in the run's sandbox, with a per-call `timeout`
 * (default {@link DEFAULT_EXECUTE_TIMEOUT_SECONDS} s, at most {@link MAX_EXECUTE_TIMEOUT_SECONDS}),
 * the exit code in the result and a clear marker when the output was cut or the command was
 * killed at its timeout. A non-zero exit is a normal result the model reads; a sandbox that
 * cannot be reached is a tool error (see ../tool-errors.ts); either way the run goes on.
 * The middleware also tells the model where the sandbox's files and the skills' copies are.
 */
import { createMiddleware, SystemMessage, tool } from "langchain";
import { z } from "zod";
import { DEFAULT_EXECUTE_TIMEOUT_SECONDS, type PluginSandboxBackend } from "./backend.ts";
import { type ExecuteResult, SANDBOX_SKILLS_DIR } from "../../kernel/index.ts";

export const MAX_EXECUTE_TIMEOUT_SECONDS = 3600;

/** Formats a result as the model sees it: output, then the markers. */
export function formatExecuteResult(r: ExecuteResult, timeoutSeconds: number): string {
  const parts = [r.output];
  if (r.truncated) {
    parts.push(
      "[Output truncated: the command printed more than the sandbox returns; only the beginning is shown. Redirect long output to a file and read parts of it.]",
    );
  }
  if (r.timedOut) {
    parts.push(
      `[Command timed out after ${timeoutSeconds} s and was killed; pass a larger "timeout" (seconds, at most ${MAX_EXECUTE_TIMEOUT_SECONDS}) if it needs longer]`,
    );
  } else if (r.exitCode === null) parts.push("[Command ended without an exit code]");
  else parts.push(`[Command ${r.exitCode === 0 ? "succeeded" : "failed"} with exit code ${r.exitCode}]`);
  return parts.filter((p, i) => i > 0 || p !== "").join("\n");
}

/**
 * The middleware that adds `execute` and the sandbox note to an agent.
 *
 * @example
 * createAgent({ model, middleware: [executeMiddleware({ backend, defaultTimeoutSeconds: 120, workdir: "/workspace", skills: true })] });
 */
export function executeMiddleware(
  opts: { backend: PluginSandboxBackend; defaultTimeoutSeconds?: number; workdir?: string; skills: boolean },
) {
  const fallback = opts.defaultTimeoutSeconds ?? DEFAULT_EXECUTE_TIMEOUT_SECONDS;
  const execute = tool(
    async ({ command, timeout }: { command: string; timeout?: number }) => {
      const seconds = timeout ?? fallback;
      return formatExecuteResult(await opts.backend.run(command, { timeoutMs: seconds * 1000 }), seconds);
    },
    {
      name: "execute",
      description: [
        "Runs a shell command in the sandbox and returns its combined stdout and stderr, with the exit code.",
        `A command still running after "timeout" seconds (default ${fallback}) is killed. Long output is cut; redirect it to a file and read that.`,
        "Chain commands with && ; prefer the file tools (read_file, write_file, edit_file, ls, glob, grep) for files.",
      ].join("\n"),
      schema: z.object({
        command: z.string().min(1).describe("The shell command to run"),
        timeout: z.number().int().min(1).max(MAX_EXECUTE_TIMEOUT_SECONDS).optional().describe(
          `Seconds before the command is killed (default ${fallback})`,
        ),
      }),
    },
  );
  const note = [
    "## Sandbox",
    "The file tools (outside /memories/) and `execute` share one sandbox filesystem; files persist between turns of this conversation.",
    opts.workdir
      ? `Commands run in ${opts.workdir}; create your files under ${opts.workdir} (other paths may be read-only).`
      : "",
    opts.skills
      ? `The skills' files are also in the sandbox under ${SANDBOX_SKILLS_DIR}/ (e.g. ${SANDBOX_SKILLS_DIR}/<skill>/...), so their scripts can be run with execute.`
      : "",
    "/memories/ is durable memory kept outside the sandbox: commands cannot see it.",
  ].filter(Boolean).join("\n");
  return createMiddleware({
    name: "AgentcliExecute",
    tools: [execute],
    wrapModelCall: (request, handler) =>
      handler({ ...request, systemMessage: request.systemMessage.concat(new SystemMessage(note)) }),
  });
}
