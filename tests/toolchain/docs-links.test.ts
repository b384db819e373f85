/**
 * The README and docs/ link only to what exists: every relative link names a file of the
 * repository, and every `#anchor` a heading of its target (GitHub's heading ids). The README
 * stays a front door (at most 15 KB).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";

const ROOT = new URL("../..", import.meta.url).pathname;
const PAGES = [
  "README.md",
  ...readdirSync(join(ROOT, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`),
];

/** The ids GitHub gives a Markdown file's headings (lower case, punctuation dropped, spaces to `-`, repeats numbered). */
export function headingIds(markdown: string): Set<string> {
  const ids = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of markdown.split("\n")) {
    if (line.startsWith("```")) fenced = !fenced;
    const m = !fenced && /^#{1,6} (.+)$/.exec(line);
    if (!m) continue;
    const base = m[1]!.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/\s/g, "-");
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    ids.add(n ? `${base}-${n}` : base);
  }
  return ids;
}

/** Each Markdown link `[text](target)` outside code blocks and code spans. */
function links(markdown: string): string[] {
  const out: string[] = [];
  let fenced = false;
  for (const line of markdown.split("\n")) {
    if (line.startsWith("```")) fenced = !fenced;
    if (fenced) continue;
    for (const m of line.replace(/`[^`]*`/g, "``").matchAll(/\]\(([^)\s]+)\)/g)) out.push(m[1]!);
  }
  return out;
}

test("README.md is at most 15 KB", () => {
  const size = statSync(join(ROOT, "README.md")).size;
  assert.ok(size <= 15 * 1024, `README.md is ${size} bytes: move detail to a page under docs/ and link it`);
});

test("relative links and anchors in README.md and docs/*.md resolve", () => {
  const broken: string[] = [];
  for (const page of PAGES) {
    for (const link of links(readFileSync(join(ROOT, page), "utf8"))) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue;
      const [path, anchor] = link.split("#") as [string, string | undefined];
      const target = path ? join(dirname(join(ROOT, page)), decodeURI(path)) : join(ROOT, page);
      if (!existsSync(target)) {
        broken.push(`${page}: (${link}): no file ${relative(ROOT, target)}`);
        continue;
      }
      if (anchor !== undefined && target.endsWith(".md") && !headingIds(readFileSync(target, "utf8")).has(anchor)) {
        broken.push(`${page}: (${link}): ${relative(ROOT, target)} has no heading with the id "${anchor}"`);
      }
    }
  }
  assert.deepEqual(
    broken,
    [],
    "Fix these links (a heading's id is its text in lower case, punctuation dropped, spaces as -)",
  );
});
