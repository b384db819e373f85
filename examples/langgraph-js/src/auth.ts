import { Auth, HTTPException } from "@langchain/langgraph-sdk/auth";

/** Tokens of the example's two users (a real project checks a JWT or asks its identity provider). */
const USERS: Record<string, { identity: string; permissions: string[] }> = {
  "token-alice": { identity: "alice", permissions: ["threads:read", "threads:write", "assistants:write"] },
  "token-bob": { identity: "bob", permissions: ["threads:read", "threads:write"] },
};

export const auth = new Auth()
  .authenticate((request: Request) => {
    const token = request.headers.get("authorization")?.replace(/^Bearer /, "");
    const user = token ? USERS[token] : undefined;
    if (!user) throw new HTTPException(401, { message: "Unknown token" });
    return user;
  })
  .on("threads", ({ user, value }) => {
    // Each user sees only the threads they created.
    if (value && typeof value === "object" && "metadata" in value) {
      (value as { metadata: Record<string, unknown> }).metadata ??= {};
      (value as { metadata: Record<string, unknown> }).metadata.owner = user.identity;
    }
    return { owner: user.identity };
  })
  .on("assistants:create", ({ permissions }) => {
    if (!permissions.includes("assistants:write")) {
      throw new HTTPException(403, { message: "Not allowed to create assistants" });
    }
  });
