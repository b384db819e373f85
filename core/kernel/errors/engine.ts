/**
 * The error catalogue: the engine (the server's role, the graphs it serves). Entries of one area;
 * core/kernel/errors-data.ts lists every area (its `ERRORS`, the order of docs/errors.md).
 */
import type { ErrorData } from "../errors-data.ts";

const roleHint = (v: { roles: string[] }) =>
  `Use one of ${
    v.roles.join(", ")
  }: api serves the Agent API only, worker runs the queue only, all does both (default).`;

/** `--role` that is not a role (the command line: exit 2). */
export const RoleFlagInvalid = {
  name: "RoleFlagInvalid",
  code: "ARGS_INVALID",
  title: "`--role` is not api, worker or all.",
  message: (v: { value: string }) => `Cannot start the server: --role "${v.value}" is not a role`,
  hint: roleHint,
} as const satisfies ErrorData;

/** AGENTCLI_ROLE that is not a role (the environment: exit 1). */
export const RoleEnvInvalid = {
  name: "RoleEnvInvalid",
  code: "ENV_INVALID",
  title: "AGENTCLI_ROLE is not api, worker or all.",
  message: (v: { value: string }) => `Cannot start the server: AGENTCLI_ROLE "${v.value}" is not a role`,
  hint: roleHint,
} as const satisfies ErrorData;

/** A run names a graph this server does not serve. */
export const GraphNotServed = {
  name: "GraphNotServed",
  code: "NOT_FOUND",
  title: "A run names a graph the server does not serve.",
  message: (v: { graph: string }) => `Cannot find graph "${v.graph}": this server does not serve it`,
  hint: (v: { served: string[] }) => `Graphs served: ${v.served.map((g) => `"${g}"`).join(", ")}.`,
} as const satisfies ErrorData;

/** A graph module whose export is not a graph (`found`: what it is, "a number (42)"). */
export const GraphExportInvalid = {
  name: "GraphExportInvalid",
  code: "GRAPH_INVALID",
  title: "A graph module exports something that is not a graph.",
  message: (v: { graph: string; found: string }) =>
    `Cannot serve graph "${v.graph}": its module exports ${v.found}, not a graph`,
  hint: "Export a compiled graph, a StateGraph, or a function returning one.",
} as const satisfies ErrorData;

/** A graph factory that returned something that is not a graph. */
export const GraphFactoryInvalid = {
  name: "GraphFactoryInvalid",
  code: "GRAPH_INVALID",
  title: "A graph factory returned something that is not a graph.",
  message: (v: { graph: string; found: string }) =>
    `Cannot serve graph "${v.graph}": its factory returned ${v.found}, not a graph`,
  hint: "A graph factory returns a compiled graph or a StateGraph (sync or async).",
} as const satisfies ErrorData;

/** This area's entries, in the order docs/errors.md lists them. */
export const ENGINE_ERRORS: readonly ErrorData[] = [
  RoleFlagInvalid,
  RoleEnvInvalid,
  GraphNotServed,
  GraphExportInvalid,
  GraphFactoryInvalid,
];
