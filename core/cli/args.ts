/**
 * Command-line flags on top of `node:util`'s `parseArgs`: declared flags only, `--flag value`
 * and `--flag=value`, booleans, repeatable strings, integers; unknown flags are a user error
 * that names the command's `--help`.
 */
import { parseArgs as nodeParseArgs, type ParseArgsConfig } from "node:util";
import {
  agentcliError,
  ArgsBadValue,
  ArgsMissing,
  ArgsUnexpected,
  ArgsUnknownOption,
  ArgsValueMissing,
} from "../kernel/index.ts";

export type FlagSpec =
  | { type: "boolean"; short?: string; description: string }
  | { type: "string"; short?: string; description: string; placeholder?: string; default?: string; multiple?: boolean }
  | {
    type: "int";
    short?: string;
    description: string;
    placeholder?: string;
    default?: number;
    min?: number;
    max?: number;
  };

export type FlagValues<F extends Record<string, FlagSpec>> = {
  [K in keyof F]: F[K] extends { type: "boolean" } ? boolean
    : F[K] extends { type: "int"; default: number } ? number
    : F[K] extends { type: "int" } ? number | undefined
    : F[K] extends { type: "string"; multiple: true } ? string[]
    : F[K] extends { type: "string"; default: string } ? string
    : string | undefined;
};

/** `--config <path>`: the project's agent.toml (dev, deploy). */
export const CONFIG_FLAG = {
  type: "string",
  placeholder: "<path>",
  default: "agent.toml",
  description: "The project's agent.toml, or its directory (then <dir>/agent.toml)",
} as const;

/** `--port <int>` with a command's default. */
export function portFlag<D extends number>(defaultPort: D, description = "Port to listen on") {
  return { type: "int", placeholder: "<int>", default: defaultPort, min: 0, max: 65535, description } as const;
}

/** `--host <addr>` with a command's default. */
export function hostFlag<D extends string>(defaultHost: D) {
  return { type: "string", placeholder: "<addr>", default: defaultHost, description: "Address to listen on" } as const;
}

/** `--sandbox <runtime>` of `dev` and `serve`. */
export const SANDBOX_FLAG = {
  type: "string",
  placeholder: "<runtime>",
  description:
    'Run the agent\'s sandboxes with this runtime instead of the [sandbox] provider: "local" runs them on this machine with bubblewrap (bwrap)',
} as const;

/** `--graph <id>=<module>[:<export>]` (repeatable): extra graph modules served beside the agent (dev, serve). */
export const GRAPH_FLAG = {
  type: "string",
  multiple: true,
  placeholder: "<id>=<module>[:<export>]",
  description:
    "Also serve a graph, as langgraph.json names one: a module exporting (as `graph`, default, or <export>) a compiled graph, a StateGraph, or a (async) factory taking the run config; repeatable",
} as const;

/** `--replace-agent`: lets `--graph agent=<module>` replace the project's agent graph. */
export const REPLACE_AGENT_FLAG = {
  type: "boolean",
  description: "Let --graph agent=<module> replace the project's agent graph (otherwise that id is refused)",
} as const;

export interface CommandSpec<F extends Record<string, FlagSpec>> {
  name: string;
  usage: string;
  summary: string;
  flags: F;
  /** `variadic` (the last one only): takes every remaining argument. */
  positionals?: { name: string; description: string; required?: boolean; variadic?: boolean }[];
}

/** Parses argv for one command; `help` is true when `--help`/`-h` was given. */
export function parseArgs<F extends Record<string, FlagSpec>>(
  spec: CommandSpec<F>,
  argv: readonly string[],
): { flags: FlagValues<F>; positionals: string[]; help: boolean } {
  const flags: Record<string, unknown> = {};
  // node:util tokenizes (long/short/grouped flags, `--flag=value`, `--`); we keep strict:false
  // and walk its tokens so unknown flags, missing values and bad integers get our own errors.
  const options: ParseArgsConfig["options"] = { help: { type: "boolean", short: "h" } };
  const byFlag = new Map<string, string>();
  for (const [name, f] of Object.entries(spec.flags)) {
    if (f.type === "boolean") flags[name] = false;
    else if (f.type === "string" && f.multiple) flags[name] = [];
    else if ("default" in f && f.default !== undefined) flags[name] = f.default;
    const flag = flagName(name);
    byFlag.set(flag, name);
    options[flag] = { type: f.type === "boolean" ? "boolean" : "string", ...(f.short ? { short: f.short } : {}) };
  }
  const { tokens } = nodeParseArgs({ args: [...argv], options, strict: false, allowPositionals: true, tokens: true });
  const positionals: string[] = [];
  let help = false;
  for (const token of tokens) {
    if (token.kind === "positional") {
      positionals.push(token.value);
      continue;
    }
    if (token.kind !== "option") continue;
    if (token.name === "help") {
      help = true;
      continue;
    }
    const name = byFlag.get(token.name);
    const f = name === undefined ? undefined : spec.flags[name] as FlagSpec;
    if (name === undefined || !f) {
      throw agentcliError(ArgsUnknownOption, { command: spec.name, option: token.rawName });
    }
    const flagLabel = `--${token.name}`;
    if (f.type === "boolean") {
      if (token.inlineValue) {
        const v = token.value ?? "";
        if (v !== "true" && v !== "false") {
          throw agentcliError(ArgsBadValue, {
            command: spec.name,
            flag: flagLabel,
            value: v,
            expected: "true or false",
          });
        }
        flags[name] = v === "true";
      } else flags[name] = true;
      continue;
    }
    const value = token.value;
    if (value === undefined) {
      throw agentcliError(ArgsValueMissing, {
        command: spec.name,
        flag: flagLabel,
        placeholder: "placeholder" in f && f.placeholder ? f.placeholder : "<value>",
      });
    }
    if (f.type === "int") {
      const n = Number(value);
      if (!/^-?\d+$/.test(value) || (f.min !== undefined && n < f.min) || (f.max !== undefined && n > f.max)) {
        throw agentcliError(ArgsBadValue, {
          command: spec.name,
          flag: flagLabel,
          value,
          expected: `an integer${f.min !== undefined ? ` from ${f.min}` : ""}${
            f.max !== undefined ? ` to ${f.max}` : ""
          }`,
        });
      }
      flags[name] = n;
    } else if (f.multiple) (flags[name] as string[]).push(value);
    else flags[name] = value;
  }
  if (!help) {
    for (const p of spec.positionals ?? []) {
      if (p.required && positionals.length === 0) {
        throw agentcliError(ArgsMissing, { command: spec.name, argument: p.name, usage: spec.usage });
      }
    }
    const max = spec.positionals?.at(-1)?.variadic ? Infinity : spec.positionals?.length ?? 0;
    if (positionals.length > max) {
      throw agentcliError(ArgsUnexpected, { command: spec.name, argument: positionals[max]!, usage: spec.usage });
    }
  }
  return { flags: flags as FlagValues<F>, positionals, help };
}

/** `replaceAgent` -> `replace-agent`: flags are declared camelCase and written kebab-case. */
function flagName(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

/** Renders `--help` for a command. */
export function renderHelp<F extends Record<string, FlagSpec>>(spec: CommandSpec<F>): string {
  const lines = [spec.summary, "", `Usage: ${spec.usage}`];
  if (spec.positionals?.length) {
    lines.push("", "Arguments:");
    for (const p of spec.positionals) lines.push(`  ${`<${p.name}>`.padEnd(28)}${p.description}`);
  }
  lines.push("", "Options:");
  for (const [name, f] of Object.entries(spec.flags)) {
    const flag = `--${flagName(name)}`;
    const ph = f.type === "boolean" ? "" : ` ${"placeholder" in f && f.placeholder ? f.placeholder : "<value>"}`;
    const def = "default" in f && f.default !== undefined ? ` (default: ${f.default})` : "";
    lines.push(`  ${`${f.short ? `-${f.short}, ` : ""}${flag}${ph}`.padEnd(28)}${f.description}${def}`);
  }
  lines.push(`  ${"-h, --help".padEnd(28)}Show this help`);
  return lines.join("\n");
}
