/**
 * Per-user scoping. With a per-user identity (an identity provider, or the dev bypass user),
 * threads, runs and store items belong to `metadata.owner = user.identity`; other users'
 * resources answer 404. Anonymous callers and the shared platform API key own nothing, as
 * on LangGraph's server without custom auth: no `owner`, no store prefix. Clients can never set
 * `metadata.owner` nor the auth keys of `config.configurable`: the server strips them and
 * injects the real user (`graph_auth_user_id`, `langgraph_auth_user_id`,
 * `langgraph_auth_user`). The request's user is read in core/server/http/auth-middleware.ts.
 */
import type { AuthUser } from "../../kernel/index.ts";

const AUTH_KEYS = ["graph_auth_user_id", "langgraph_auth_user_id", "langgraph_auth_user", "langgraph_auth_permissions"];

/** The identity that owns what `user` creates, or null when nothing is owned per user. */
export function ownerOf(user: AuthUser | null): string | null {
  return user && user.isAuthenticated && !user.shared ? user.identity : null;
}

/** Client metadata with `owner` removed, then set to the user when there is one. */
export function ownedMetadata(
  user: AuthUser | null,
  metadata: Record<string, unknown> | undefined,
): Record<string, unknown> {
  // LangGraph custom auth: its handlers wrote the metadata (an `owner` of theirs included).
  if (user?.langgraph) return { ...metadata };
  const { owner: _drop, ...rest } = metadata ?? {};
  const owner = ownerOf(user);
  return owner ? { ...rest, owner } : rest;
}

/** Client metadata for a patch: `owner` can never change. */
export function patchMetadata(metadata: Record<string, unknown> | undefined): Record<string, unknown> {
  const { owner: _drop, ...rest } = metadata ?? {};
  return rest;
}

/** A run config with client-supplied auth keys stripped and the real user injected. */
export function scopedConfig<C extends { configurable?: Record<string, unknown> | undefined }>(
  user: AuthUser | null,
  config: C | undefined,
): C {
  const configurable: Record<string, unknown> = { ...(config?.configurable ?? {}) };
  for (const k of AUTH_KEYS) delete configurable[k];
  if (user) {
    configurable.graph_auth_user_id = user.identity;
    configurable.langgraph_auth_user_id = user.identity;
    configurable.langgraph_auth_user = user.langgraph ? { ...user.langgraph } : { ...user };
    configurable.langgraph_auth_permissions = user.permissions ?? [];
  }
  return { ...(config ?? {}), configurable } as C;
}

/**
 * Where the API's store namespace `namespace` lives: under a per-user identity, in
 * `[identity, ...namespace]` (always prefixed, so a client reads back exactly what it
 * wrote); otherwise as given, the namespace a graph sees too.
 */
export function userNamespace(user: AuthUser | null, namespace: string[]): string[] {
  const owner = ownerOf(user);
  return owner ? [owner, ...namespace] : namespace;
}
