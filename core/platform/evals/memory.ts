/**
 * Where a `/memories/...` file of an agent lives in the store (the harness's layout, spec 2.8):
 * the user's memory, a subagent's, or the shared one. Used by `file_exists` checks in process.
 */
import { sharedNamespace, subagentNamespace, userNamespace } from "../../harness/index.ts";

/** The store item (namespace, key) of a `/memories/` path, for an assistant and a user. */
export function memoryLocation(
  path: string,
  who: { assistantId: string; user: string },
): { namespace: string[]; key: string } {
  const rest = path.slice("/memories".length);
  const user = /^\/user(\/.*)$/.exec(rest);
  if (user) return { namespace: userNamespace(who.assistantId, who.user), key: user[1]! };
  const sub = /^\/subagents\/([^/]+)(\/.*)$/.exec(rest);
  if (sub) return { namespace: subagentNamespace(who.assistantId, sub[1]!), key: sub[2]! };
  return { namespace: sharedNamespace(who.assistantId), key: rest };
}
