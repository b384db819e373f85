/**
 * The user errors of a request, shared by the engine and the server's routes: a missing
 * resource (404), a conflict (409), a value that cannot be used (422). Their entries are in
 * the catalogue (errors-data.ts).
 */
import { type AgentcliError, agentcliError } from "./errors.ts";
import { IdTaken, NotFound, RequestConflict, RequestUnprocessable } from "./errors-data.ts";

/** `<thing> "<id>" not found` (404). */
export function notFound(thing: string, id: string): AgentcliError {
  return agentcliError(NotFound, { thing, id });
}

/** A request that conflicts with the current state (409). */
export function conflict(message: string, hint?: string): AgentcliError {
  return agentcliError(RequestConflict, { problem: message, fix: hint });
}

/**
 * Creating a resource with a chosen id that is in use. Ids are one namespace for everyone, so
 * this is the same 409 whoever holds the id (another user's resource is never shown).
 */
export function idTaken(thing: string, id: string): AgentcliError {
  return agentcliError(IdTaken, { thing, id });
}

/** A request value that cannot be used (422). */
export function unprocessable(message: string): AgentcliError {
  return agentcliError(RequestUnprocessable, { problem: message });
}
