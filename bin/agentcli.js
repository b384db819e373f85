#!/usr/bin/env node
// Entry for `npx agentcli` and `npm run agentcli`: runs the TypeScript sources (Node >= 22.18
// and Deno strip types natively). `--version` is answered here: loading Node's type stripper
// alone takes longer than Node's own start.
import { readFileSync } from "node:fs";

if (wantsVersion(process.argv.slice(2))) {
  const { version } = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
  process.stdout.write(`agentcli ${version}\n`);
} else {
  await import("./main.ts");
}

/** The rule of bin/main.ts: `-v`/`--version` anywhere before `--` (not as `--plugin`'s value), or the command `version`. */
function wantsVersion(argv) {
  const rest = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--") break;
    if (a === "--plugin") i++;
    else if (a === "-v" || a === "--version") return true;
    else if (!a.startsWith("--plugin=")) rest.push(a);
  }
  return rest[0] === "version";
}
