/**
 * The error catalogue: Environment variables (ENV_INVALID). Entries of one area; core/kernel/errors-data.ts lists every area
 * (its `ERRORS`, the order of docs/errors.md).
 */
import type { ErrorData } from "../errors-data.ts";

/** A seconds variable read by `secondsSetting` (core/config/env-settings.ts). */
export const EnvNotSeconds = {
  name: "EnvNotSeconds",
  code: "ENV_INVALID",
  title: "A variable that takes a number of seconds has something else.",
  message: (v: { name: string; value: string }) =>
    `Cannot start the server: ${v.name}="${v.value}" is not a number of seconds`,
  hint: (v: { meaning: string; fallback: number }) => `Set it to the seconds ${v.meaning}; default ${v.fallback}.`,
} as const satisfies ErrorData;

/** An on/off variable read by `switchSetting` (core/config/env-settings.ts). */
export const EnvNotSwitch = {
  name: "EnvNotSwitch",
  code: "ENV_INVALID",
  title: "An on/off variable is neither on nor off.",
  message: (v: { name: string; value: string }) =>
    `Cannot start the server: ${v.name}="${v.value}" is neither on nor off`,
  hint: (v: { meaning: string; fallback: 0 | 1 }) => `Set it to 1 or 0: whether ${v.meaning}; default ${v.fallback}.`,
} as const satisfies ErrorData;

/** A whole-number variable read by `countSetting` (core/config/env-settings.ts); `zero` is what 0 means, when 0 is allowed. */
export const EnvNotCount = {
  name: "EnvNotCount",
  code: "ENV_INVALID",
  title: "A variable that takes a whole number has something else.",
  message: (v: { name: string; value: string; zero?: string }) =>
    `Cannot start the server: ${v.name}="${v.value}" is not a ${v.zero ? "whole number" : "positive whole number"}`,
  hint: (v: { meaning: string; zero?: string; fallback: number }) =>
    `Set it to the ${v.meaning}${v.zero ? ` (0: ${v.zero})` : ""}; default ${v.fallback}.`,
} as const satisfies ErrorData;

/**
 * Any other variable with a bad value: `action` is what cannot happen ("start the server"),
 * `problem` what is wrong with the value ("is not true or false"), `fix` the hint.
 */
export const EnvInvalid = {
  name: "EnvInvalid",
  code: "ENV_INVALID",
  title: "An environment variable has a value agentcli cannot use.",
  message: (v: { action: string; name: string; value: string; problem: string }) =>
    `Cannot ${v.action}: ${v.name}="${v.value}" ${v.problem}`,
  hint: (v: { fix: string }) => v.fix,
} as const satisfies ErrorData;

/** A true/false variable with something else. */
export const EnvNotTrueFalse = {
  name: "EnvNotTrueFalse",
  code: "ENV_INVALID",
  title: "A true/false variable is neither.",
  message: (v: { name: string; value: string }) =>
    `Cannot start the server: ${v.name}="${v.value}" is not true or false`,
  hint: (v: { fix: string }) => v.fix,
} as const satisfies ErrorData;

/** A whole-number variable outside its range. */
export const EnvNotInRange = {
  name: "EnvNotInRange",
  code: "ENV_INVALID",
  title: "A variable that takes a whole number in a range has something else.",
  message: (v: { name: string; value: string; min: number; max: number }) =>
    `Cannot start the server: ${v.name}="${v.value}" is not a whole number from ${v.min} to ${v.max}`,
  hint: (v: { fix: string }) => v.fix,
} as const satisfies ErrorData;

/** A comma-separated list variable with an entry that is not what the list holds. */
export const EnvListEntryInvalid = {
  name: "EnvListEntryInvalid",
  code: "ENV_INVALID",
  title: "A list variable has an entry of the wrong form.",
  message: (v: { name: string; entry: string; expected: string }) =>
    `Cannot start the server: ${v.name} has "${v.entry}", which is not ${v.expected}`,
  hint: (v: { fix: string }) => v.fix,
} as const satisfies ErrorData;

/** Variables that are each well-formed but do not go together (one needs another, or they conflict). */
export const EnvMismatch = {
  name: "EnvMismatch",
  code: "ENV_INVALID",
  title: "Environment variables do not go together.",
  message: (v: { action: string; problem: string }) => `Cannot ${v.action}: ${v.problem}`,
  hint: (v: { fix: string }) => v.fix,
} as const satisfies ErrorData;

/** An AES key (LANGGRAPH_AES_KEY, AGENTCLI_PLATFORM_SECRETS_KEY, ...) of the wrong length. */
export const AesKeyLength = {
  name: "AesKeyLength",
  code: "ENV_INVALID",
  title: "An encryption key is not 16, 24 or 32 bytes long.",
  message: (v: { action: string; length: number; sizes: string }) =>
    `Cannot ${v.action}: an AES key must be ${v.sizes}, and this one is ${v.length}`,
  hint: "Generate one with: openssl rand -hex 16   (32 hex characters: a 32-byte key).",
} as const satisfies ErrorData;

/** This area's entries, in the order docs/errors.md lists them. */
export const ENV_ERRORS: readonly ErrorData[] = [
  EnvNotSeconds,
  EnvNotSwitch,
  EnvNotCount,
  EnvInvalid,
  EnvNotTrueFalse,
  EnvNotInRange,
  EnvListEntryInvalid,
  EnvMismatch,
  AesKeyLength,
];
