/**
 * `approvals.toml`: tools that need a person's approval before they run (human in the loop).
 *
 *   # built-in tools by name; MCP tools as "<server>/<tool>" or "<server>/*"
 *   tools = ["execute", "write_file", "docs/delete_page"]
 */
import { parse as parseToml, TomlError } from "smol-toml";
import type { Diagnostic } from "../kernel/index.ts";
import { locateTomlKey, tomlSyntaxMessage } from "./toml-locate.ts";

export const BUILTIN_TOOLS = [
  "write_todos",
  "ls",
  "read_file",
  "write_file",
  "edit_file",
  "glob",
  "grep",
  "execute",
  "task",
] as const;

export function parseApprovals(
  text: string,
  file: string,
  ctx: { mcpServers: readonly string[]; sandbox: boolean },
  report: (d: Diagnostic) => void,
): string[] {
  let doc: Record<string, unknown>;
  try {
    doc = parseToml(text) as Record<string, unknown>;
  } catch (err) {
    const e = err as TomlError;
    report({
      file,
      line: e.line,
      column: e.column,
      message: `is not valid TOML: ${tomlSyntaxMessage(e, text)}`,
      hint: 'Write: tools = ["execute"]',
    });
    return [];
  }
  for (const key of Object.keys(doc).filter((k) => k !== "tools")) {
    report({
      file,
      line: locateTomlKey(text, [key]),
      message: `unknown key "${key}"`,
      hint: 'Only "tools" is allowed: tools = ["execute", "<mcp server>/<tool>"]',
    });
  }
  const tools = doc.tools;
  if (tools === undefined) return [];
  const line = locateTomlKey(text, ["tools"]);
  if (!Array.isArray(tools) || tools.some((t) => typeof t !== "string")) {
    report({
      file,
      line,
      message: '"tools" must be a list of strings',
      hint: 'tools = ["execute", "docs/delete_page"]',
    });
    return [];
  }
  const out: string[] = [];
  for (const t of tools as string[]) {
    const slash = t.indexOf("/");
    if (slash === -1) {
      if (!(BUILTIN_TOOLS as readonly string[]).includes(t)) {
        report({
          file,
          line,
          message: `"${t}" is not a built-in tool`,
          hint: `Built-in tools: ${BUILTIN_TOOLS.join(", ")}; MCP tools are written "<server>/<tool>".`,
        });
        continue;
      }
      if (t === "execute" && !ctx.sandbox) {
        report({
          file,
          line,
          message: '"execute" needs a sandbox, but [sandbox].provider is "none"',
          hint: 'Configure a [sandbox] provider in agent.toml, or remove "execute".',
        });
        continue;
      }
    } else {
      const server = t.slice(0, slash);
      if (!ctx.mcpServers.includes(server) || slash === t.length - 1) {
        report({
          file,
          line,
          message: `"${t}" names MCP server "${server}", which mcp.json does not declare`,
          hint: ctx.mcpServers.length
            ? `Declared servers: ${ctx.mcpServers.join(", ")}.`
            : "Declare the server in mcp.json first.",
        });
        continue;
      }
    }
    out.push(t);
  }
  return [...new Set(out)].sort();
}
