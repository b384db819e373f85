/**
 * `mcp.json`: MCP tool servers, `http` (Streamable HTTP) or `sse` only (spec 2.1, 7, 8).
 * `${VAR}` references in URLs and headers must resolve from `.env` or the environment; the
 * bundle keeps the references (values are secrets) and the harness expands them at run time.
 *
 *   { "mcpServers": { "docs": { "transport": "http", "url": "https://...", "headers": { "Authorization": "Bearer ${DOCS_TOKEN}" } } } }
 */
import { agentcliError, type Diagnostic, type Env, VariablesNotSet } from "../kernel/index.ts";
import type { McpServerConfig } from "./schema.ts";

const VAR_RE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;
const SERVER_KEYS = new Set(["transport", "type", "url", "headers", "timeout"]);

/** Parses and checks one `mcp.json`; problems go to `report`. */
export function parseMcpJson(
  text: string,
  file: string,
  env: Env,
  report: (d: Diagnostic) => void,
): Record<string, McpServerConfig> {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    const pos = /position (\d+)/.exec((err as Error).message);
    const line = pos ? text.slice(0, Number(pos[1])).split("\n").length : undefined;
    report({
      file,
      line,
      message: `is not valid JSON: ${(err as Error).message}`,
      hint: 'Write {"mcpServers": {}} for no servers.',
    });
    return {};
  }
  if (!isObject(doc) || !isObject(doc.mcpServers)) {
    report({
      file,
      line: 1,
      message: 'must be an object with "mcpServers"',
      hint: '{"mcpServers": {"<name>": {"transport": "http", "url": "https://..."}}}',
    });
    return {};
  }
  const dup = duplicateKey(text);
  if (dup) {
    report({
      file,
      line: dup.line,
      message: `key "${dup.key}" appears twice in one object`,
      hint: "Keep one of them (JSON keeps only the last, silently).",
    });
  }
  const extra = Object.keys(doc).filter((k) => k !== "mcpServers");
  if (extra.length) {
    report({
      file,
      line: lineOfKey(text, extra[0]!),
      message: `unknown key${extra.length > 1 ? "s" : ""} ${extra.map((k) => `"${k}"`).join(", ")}`,
      hint: 'Only "mcpServers" is allowed at the top level.',
    });
  }
  const servers: Record<string, McpServerConfig> = {};
  for (const [name, raw] of Object.entries(doc.mcpServers)) {
    const line = lineOfKey(text, name);
    const at = (message: string, hint: string) => report({ file, line, message: `server "${name}": ${message}`, hint });
    if (!/^[A-Za-z0-9_-]+$/.test(name)) {
      at("name may contain only letters, digits, '_' and '-'", "Rename the server; tools are named after it.");
      continue;
    }
    if (!isObject(raw)) {
      at("must be an object", '{"transport": "http", "url": "https://..."}');
      continue;
    }
    if (raw.transport !== undefined && raw.type !== undefined && raw.transport !== raw.type) {
      at(
        `"transport" ("${String(raw.transport)}") and "type" ("${String(raw.type)}") disagree`,
        'Keep one of them: "transport": "http" or "sse".',
      );
      continue;
    }
    const transportRaw = raw.transport ?? raw.type ?? (raw.command !== undefined ? "stdio" : undefined);
    if (transportRaw === "stdio") {
      at(
        'uses the "stdio" transport, which deployments do not support',
        'Run the tool server over HTTP and set "transport": "http" (or "sse") with its "url".',
      );
      continue;
    }
    const transport =
      transportRaw === "streamable_http" || transportRaw === "streamable-http" || transportRaw === "streamableHttp"
        ? "http"
        : transportRaw;
    if (transport !== "http" && transport !== "sse") {
      at(
        transportRaw === undefined ? 'has no "transport"' : `transport "${String(transportRaw)}" is not supported`,
        'Set "transport" to "http" or "sse".',
      );
      continue;
    }
    const unknown = Object.keys(raw).filter((k) => !SERVER_KEYS.has(k));
    if (unknown.length) {
      at(
        `unknown key${unknown.length > 1 ? "s" : ""} ${unknown.map((k) => `"${k}"`).join(", ")}`,
        `Allowed keys: ${[...SERVER_KEYS].join(", ")}.`,
      );
    }
    if (typeof raw.url !== "string" || !raw.url) {
      at('has no "url"', 'Add "url": "https://host/mcp".');
      continue;
    }
    const headers = raw.headers;
    if (headers !== undefined && (!isObject(headers) || Object.values(headers).some((v) => typeof v !== "string"))) {
      at('"headers" must be an object of strings', '"headers": {"Authorization": "Bearer ${TOKEN}"}');
      continue;
    }
    if (
      raw.timeout !== undefined &&
      (typeof raw.timeout !== "number" || !Number.isFinite(raw.timeout) || raw.timeout <= 0)
    ) {
      at('"timeout" must be a positive number of seconds', '"timeout": 30');
      continue;
    }
    const missing = new Set<string>();
    const expandedUrl = expandVars(raw.url, env, missing);
    for (const v of Object.values((headers as Record<string, string>) ?? {})) expandVars(v, env, missing);
    if (missing.size) {
      at(
        `references ${[...missing].map((v) => `\${${v}}`).join(", ")}, which ${
          missing.size > 1 ? "are" : "is"
        } not set`,
        `Set ${[...missing].join(", ")} in .env beside agent.toml or in the environment.`,
      );
      continue;
    }
    if (!/^https?:\/\/[^\s]+$/.test(expandedUrl) || !URL.canParse(expandedUrl)) {
      at(`url "${raw.url}" is not an http(s) URL`, 'Use the server\'s full address, e.g. "https://host/mcp".');
      continue;
    }
    servers[name] = {
      transport,
      url: raw.url,
      ...(headers ? { headers: headers as Record<string, string> } : {}),
      ...(raw.timeout ? { timeout: raw.timeout as number } : {}),
    };
  }
  return servers;
}

/** Replaces `${VAR}` from `env`; names of unset variables go to `missing`. */
export function expandVars(value: string, env: Env, missing?: Set<string>): string {
  return value.replace(VAR_RE, (_, name: string) => {
    const v = env[name];
    if (v === undefined || v === "") {
      missing?.add(name);
      return "";
    }
    return v;
  });
}

/**
 * Expands every `${VAR}` in `value` at run time; an unset reference is a clear error naming
 * the variable and `where` it was used (e.g. `the url of MCP server "docs" in mcp.json`).
 */
export function expandEnv(value: string, env: Env, where: string): string {
  const missing = new Set<string>();
  const out = expandVars(value, env, missing);
  if (missing.size > 0) {
    const names = [...missing];
    throw agentcliError(VariablesNotSet, { where, names }, { status: 422 });
  }
  return out;
}

/**
 * The first key written twice in one object of a JSON text (which `JSON.parse` would keep
 * only the last of), with its line; the text is known to parse.
 */
function duplicateKey(text: string): { key: string; line: number } | null {
  const stack: Array<Set<string> | null> = [];
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === "{") {
      stack.push(new Set());
      expectKey = true;
    } else if (ch === "[") {
      stack.push(null);
    } else if (ch === "}" || ch === "]") {
      stack.pop();
    } else if (ch === ",") {
      expectKey = stack.at(-1) instanceof Set;
    } else if (ch === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      if (expectKey) {
        const key = JSON.parse(text.slice(i, j + 1)) as string;
        const keys = stack.at(-1)!;
        if (keys.has(key)) return { key, line: text.slice(0, i).split("\n").length };
        keys.add(key);
        expectKey = false;
      }
      i = j;
    }
  }
  return null;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function lineOfKey(text: string, key: string): number | undefined {
  const idx = text.indexOf(JSON.stringify(key));
  return idx === -1 ? undefined : text.slice(0, idx).split("\n").length;
}
