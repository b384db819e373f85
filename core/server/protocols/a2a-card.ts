/**
 * A2A agent cards of the deployment's assistants, in the two wire forms peers read: A2A 1.0
 * (`supportedInterfaces`, proto-JSON security schemes), asked for with `A2A-Version: 1.0`,
 * and A2A 0.3 (`url`, `preferredTransport`, OpenAPI-style security schemes) for requests
 * without that header. Both point the JSON-RPC interface at `{base}/a2a/{assistant_id}`.
 *
 * @example
 * const card = agentCardJson(assistant, { base: "https://agent.example.com", version: "0.1.0", auth: "bearer", skills: [] });
 */
import { AgentCard } from "@a2a-js/sdk";
import type { Assistant } from "../../storage/index.ts";

/** How callers authenticate, as the card announces it. */
export type CardAuth = "bearer" | "api-key" | "none";

export interface CardSkill {
  name: string;
  description: string;
}

export interface CardOptions {
  /** The deployment's public origin, e.g. `https://agent.example.com`. */
  base: string;
  version: string;
  auth: CardAuth;
  /** The project's skills (each becomes an A2A skill); the assistant itself when empty. */
  skills: CardSkill[];
}

const MODES = ["text/plain", "application/json"];

/** The JSON-RPC URL of an assistant. */
export function a2aUrl(base: string, assistantId: string): string {
  return `${base}/a2a/${encodeURIComponent(assistantId)}`;
}

function skillsOf(
  a: Assistant,
  skills: CardSkill[],
): Array<{ id: string; name: string; description: string; tags: string[]; examples: string[] }> {
  if (skills.length === 0) {
    return [{
      id: a.graph_id,
      name: a.name,
      description: a.description || `Talk to the assistant "${a.name}".`,
      tags: ["assistant"],
      examples: [],
    }];
  }
  return skills.map((s) => ({ id: s.name, name: s.name, description: s.description, tags: ["skill"], examples: [] }));
}

/** The A2A 1.0 card (JSON form). */
export function agentCardJson(a: Assistant, o: CardOptions): Record<string, unknown> {
  const url = a2aUrl(o.base, a.assistant_id);
  const security = o.auth === "bearer"
    ? {
      bearer: {
        httpAuthSecurityScheme: {
          scheme: "Bearer",
          description: "The identity provider's session token: Authorization: Bearer <token>.",
        },
      },
    }
    : o.auth === "api-key"
    ? {
      apiKey: {
        apiKeySecurityScheme: {
          location: "header",
          name: "x-api-key",
          description: "The deployment's PLATFORM_API_KEY.",
        },
      },
    }
    : {};
  const json = {
    name: a.name,
    description: a.description || `The agent "${a.name}".`,
    supportedInterfaces: [
      { url, protocolBinding: "JSONRPC", protocolVersion: "1.0" },
      { url, protocolBinding: "JSONRPC", protocolVersion: "0.3" },
    ],
    provider: { organization: "agentcli", url: o.base },
    version: o.version,
    documentationUrl: `${o.base}/openapi.json`,
    capabilities: { streaming: true, pushNotifications: false, extendedAgentCard: false },
    securitySchemes: security,
    securityRequirements: Object.keys(security).map((k) => ({ schemes: { [k]: { list: [] } } })),
    defaultInputModes: MODES,
    defaultOutputModes: MODES,
    skills: skillsOf(a, o.skills),
  };
  // Round trip through the SDK's codec: the served card is exactly what its clients parse.
  return AgentCard.toJSON(AgentCard.fromJSON(json)) as Record<string, unknown>;
}

/** The card as the SDK's server pieces use it (for version checks). */
export function agentCardInternal(a: Assistant, o: CardOptions): AgentCard {
  return AgentCard.fromJSON(agentCardJson(a, o));
}

/** The A2A 0.3 card. */
export function legacyAgentCardJson(a: Assistant, o: CardOptions): Record<string, unknown> {
  const url = a2aUrl(o.base, a.assistant_id);
  const security = o.auth === "bearer"
    ? { bearer: { type: "http", scheme: "bearer", description: "The identity provider's session token." } }
    : o.auth === "api-key"
    ? { apiKey: { type: "apiKey", in: "header", name: "x-api-key", description: "The deployment's PLATFORM_API_KEY." } }
    : {};
  return {
    protocolVersion: "0.3.0",
    name: a.name,
    description: a.description || `The agent "${a.name}".`,
    url,
    preferredTransport: "JSONRPC",
    additionalInterfaces: [{ url, transport: "JSONRPC" }],
    provider: { organization: "agentcli", url: o.base },
    version: o.version,
    documentationUrl: `${o.base}/openapi.json`,
    capabilities: { streaming: true, pushNotifications: false, stateTransitionHistory: false },
    securitySchemes: security,
    security: Object.keys(security).map((k) => ({ [k]: [] })),
    defaultInputModes: MODES,
    defaultOutputModes: MODES,
    skills: skillsOf(a, o.skills),
    supportsAuthenticatedExtendedCard: false,
  };
}
