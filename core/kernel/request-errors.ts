/**
 * The user errors of a request, shared by the engine, the server's routes and the control
 * plane: a missing resource (404), an id in use (409). Their entries are in the catalogue
 * (errors/requests.ts); every other refusal has an entry of its own.
 */
import { type AgentcliError, agentcliError } from "./errors.ts";
import { IdTaken, NotFound } from "./errors-data.ts";

/** `<thing> "<id>" not found` (404). */
export function notFound(thing: string, id: string): AgentcliError {
  return agentcliError(NotFound, { thing, id });
}

/**
 * Creating a resource with a chosen id that is in use. Ids are one namespace for everyone, so
 * this is the same 409 whoever holds the id (another user's resource is never shown).
 */
export function idTaken(thing: string, id: string): AgentcliError {
  return agentcliError(IdTaken, { thing, id });
}
