/**
 * Repository listings (spec 2.15) from an integration's API: `repohost` speaks the
 * GitHub-style REST API (`GET /user/repos`, `Authorization: Bearer`), `forge` the
 * Gitea/Forgejo one (`GET /api/v1/user/repos`, `Authorization: token`). Pages are followed
 * until a short page; a failing upstream is a 502 that names the integration and the status.
 */
import { agentcliError, RepoListingFailed } from "../kernel/index.ts";
import type { IntegrationRow } from "./store/tenancy.ts";

export interface RepositoryListing {
  host_integration_id: string;
  id: number;
  name: string;
  owner: string;
  url: string;
  default_branch: string;
}

interface UpstreamRepo {
  id: number;
  name: string;
  owner?: { login?: string; username?: string } | null;
  full_name?: string;
  clone_url?: string;
  html_url?: string;
  default_branch?: string;
}

const MAX_PAGES = 50;

export async function listRepositories(
  integration: IntegrationRow,
  opts: { fetch?: typeof fetch; signal?: AbortSignal } = {},
): Promise<RepositoryListing[]> {
  const doFetch = opts.fetch ?? fetch;
  const forge = integration.kind === "forge";
  const perPage = forge ? 50 : 100;
  const base = forge ? `${integration.api_url}/api/v1` : integration.api_url;
  const headers = {
    accept: "application/json",
    authorization: forge ? `token ${integration.token}` : `Bearer ${integration.token}`,
    "user-agent": "agentcli-platform",
  };
  const out: RepositoryListing[] = [];
  for (let page = 1; page <= MAX_PAGES; page++) {
    const url = `${base}/user/repos?${forge ? "limit" : "per_page"}=${perPage}&page=${page}`;
    let res: Response;
    try {
      res = await doFetch(url, { headers, signal: opts.signal });
    } catch (err) {
      throw upstream(integration, `cannot reach ${base}: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (!res.ok) {
      await res.body?.cancel();
      const hint = res.status === 401 || res.status === 403 ? " (check the integration's token)" : "";
      throw upstream(integration, `the ${integration.kind} API answered ${res.status}${hint}`);
    }
    const items = (await res.json().catch(() => null)) as UpstreamRepo[] | null;
    if (!Array.isArray(items)) {
      throw upstream(integration, "the API answered something that is not a list of repositories");
    }
    for (const r of items) {
      out.push({
        host_integration_id: integration.id,
        id: Number(r.id),
        name: r.name,
        owner: r.owner?.login ?? r.owner?.username ?? (r.full_name?.split("/")[0] ?? ""),
        url: r.clone_url ?? r.html_url ?? "",
        default_branch: r.default_branch ?? "main",
      });
    }
    if (items.length < perPage) break;
  }
  return out;
}

function upstream(integration: IntegrationRow, state: string) {
  return agentcliError(RepoListingFailed, { integration: integration.id, state }, { status: 502 });
}
