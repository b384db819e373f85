/**
 * The built-in memory plugin: `/memories/` and user memory live in the agent server's own
 * database (embedded PGlite, or PostgreSQL with `DATABASE_URL`), beside threads and runs, and
 * show in the Agent API's `/store`. Selected unless `AGENTCLI_MEMORY` names another plugin.
 */
import { definePlugin } from "../../core/index.ts";

export default definePlugin({
  name: "memory-store",
  kind: "extension",
  description: "Memory in the agent server's database (PGlite or PostgreSQL)",
  hooks: {
    "memory:backend": ({ serverStore }) => serverStore,
  },
});
