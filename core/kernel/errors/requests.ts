/**
 * The error catalogue: Requests of the Agent API (NOT_FOUND, CONFLICT, UNPROCESSABLE). Entries of one area; core/kernel/errors-data.ts lists every area
 * (its `ERRORS`, the order of docs/errors.md).
 */
import type { ErrorData } from "../errors-data.ts";

/** A resource a request names does not exist (or is not the caller's to see). */
export const NotFound = {
  name: "NotFound",
  code: "NOT_FOUND",
  title: "The thread, run, assistant or other resource a request names does not exist.",
  message: (v: { thing: string; id: string }) => `${v.thing} "${v.id}" not found`,
  hint: (v: { thing: string }) => `Check the ${v.thing.toLowerCase()} id.`,
} as const satisfies ErrorData;

/** Creating a resource with a chosen id that is in use (by anyone: ids are one namespace). */
export const IdTaken = {
  name: "IdTaken",
  code: "CONFLICT",
  title: "A resource is created with an id that is taken.",
  message: (v: { thing: string; id: string }) => `Cannot create ${v.thing} "${v.id}": the id is taken`,
  hint: (v: { thing: string }) => `Leave out the ${v.thing} id to get a new random one.`,
} as const satisfies ErrorData;

/** This area's entries, in the order docs/errors.md lists them. */
export const REQUESTS_ERRORS: readonly ErrorData[] = [
  NotFound,
  IdTaken,
];
