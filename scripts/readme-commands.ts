/**
 * Prints the commands of README.md's ```sh blocks, one per line and in order, for CI to run as
 * written (`.ci/run`): a trailing `# comment` is dropped, `a && b` becomes two commands, and a
 * line with a `<placeholder>` is a template, not printed. Plain Node, no dependencies: it runs
 * before `npm ci`.
 *
 *   node scripts/readme-commands.ts [README.md]
 */
import { readFileSync } from "node:fs";

/** The runnable commands of a Markdown text's `sh` code blocks. */
export function readmeCommands(markdown: string): string[] {
  const out: string[] = [];
  for (const block of markdown.matchAll(/^```sh\n([\s\S]*?)^```$/gm)) {
    for (const raw of block[1]!.split("\n")) {
      const line = raw.replace(/\s+#.*$/, "").trim();
      if (!line || line.startsWith("#") || /<[a-z][\w-]*>/i.test(line)) continue;
      out.push(...line.split(" && ").map((c) => c.trim()));
    }
  }
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const file = process.argv[2] ?? new URL("../README.md", import.meta.url).pathname;
  process.stdout.write(readmeCommands(readFileSync(file, "utf8")).map((c) => `${c}\n`).join(""));
}
