#!/usr/bin/env node
// Entry for `npx agentcli` and `npm run agentcli`: runs the TypeScript sources. Node >= 22.18
// and Deno strip types natively; older Node registers tsx first.
const [major, minor] = process.versions.node.split(".").map(Number);
const native = major > 22 || (major === 22 && minor >= 18);
if (!native) {
  const { register } = await import("tsx/esm/api");
  register();
}
await import("./main.ts");
