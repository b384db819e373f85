/**
 * Reads eval cases: the files and folders named (default `<project>/evals/`), each a YAML or
 * JSON case; a bad file is an error naming its file, line and what is wrong.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { basename, extname, join, relative } from "node:path";
import { isMap, isSeq, LineCounter, parseDocument } from "yaml";
import { agentcliError, EvalCaseDuplicate, EvalCaseInvalid, EvalNoCases, EvalPathMissing } from "../../kernel/index.ts";
import { type EvalCase, evalCaseSchema } from "./case-schema.ts";

const CASE_EXTENSIONS = new Set([".yaml", ".yml", ".json"]);

/** The case files under the paths given (files as given; folders recursively, sorted). */
export function findCaseFiles(paths: readonly string[], opts: { cwd: string; root: string }): string[] {
  const roots = paths.length > 0 ? paths.map((p) => join(opts.cwd, p)) : [join(opts.root, "evals")];
  const files: string[] = [];
  for (const path of roots) {
    if (!existsSync(path)) {
      if (paths.length === 0) continue;
      throw agentcliError(EvalPathMissing, { path: relative(opts.cwd, path) || path });
    }
    if (statSync(path).isDirectory()) files.push(...walk(path));
    else files.push(path);
  }
  if (files.length === 0) {
    const where = roots.map((r) => relative(opts.cwd, r) || ".").join(", ");
    throw agentcliError(EvalNoCases, { where });
  }
  return files;
}

function walk(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    if (entry.name.startsWith(".")) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...walk(path));
    else if (CASE_EXTENSIONS.has(extname(entry.name))) out.push(path);
  }
  return out;
}

/** Reads and checks every case file; names must be unique. `display` is how files are named in errors. */
export function loadCases(files: readonly string[], display: (file: string) => string): EvalCase[] {
  const byName = new Map<string, string>();
  return files.map((file) => {
    const c = parseCase(readFileSync(file, "utf8"), display(file));
    const first = byName.get(c.name);
    if (first) throw agentcliError(EvalCaseDuplicate, { name: c.name, first, second: c.file });
    byName.set(c.name, c.file);
    return c;
  });
}

/**
 * Parses one case file's text (YAML, of which JSON is a subset).
 *
 * @example parseCase("turns: [{user: hi}]\nchecks: [{status: success}]\n", "evals/hi.yaml").name // "hi"
 */
export function parseCase(text: string, file: string): EvalCase {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false });
  const at = (offset: number | undefined) => `${file}:${offset === undefined ? 1 : lines.linePos(offset).line}`;
  const syntax = doc.errors[0];
  if (syntax) {
    throw agentcliError(EvalCaseInvalid, { where: at(syntax.pos[0]), problem: syntax.message.split("\n")[0]! });
  }
  const data = doc.toJS() as unknown;
  const parsed = evalCaseSchema.safeParse(data);
  if (!parsed.success) {
    const issue = deepestIssue(parsed.error.issues);
    const path = issue.path.filter((p): p is string | number => typeof p !== "symbol");
    const node = nodeAt(doc, path);
    const where = path.length > 0 ? ` (at ${path.join(".")})` : "";
    throw agentcliError(EvalCaseInvalid, { where: at(node?.range?.[0]), problem: `${describe(issue)}${where}` });
  }
  const checks = doc.get("checks", true);
  const checkLines = parsed.data.checks.map((_, i) => {
    const item = isSeq(checks) ? (checks.items[i] as { range?: [number, number, number] } | undefined) : undefined;
    return item?.range ? lines.linePos(item.range[0]).line : 1;
  });
  const name = parsed.data.name ?? basename(file, extname(file));
  return { ...parsed.data, name, file, checkLines };
}

type Issue = { path: PropertyKey[]; message: string; code: string; errors?: Issue[][]; keys?: string[] };

/**
 * In a union, the branch the value meant explains the problem best: the one whose keys it
 * has (no unknown keys), else the one that got furthest.
 */
function deepestIssue(issues: readonly Issue[]): Issue {
  let best = issues[0]!;
  for (const issue of issues) {
    let chosen = issue;
    if (issue.code === "invalid_union" && issue.errors?.length) {
      const branches = issue.errors.filter((b) => b.length > 0);
      const meant = branches.filter((b) => !b.some((i) => i.code === "unrecognized_keys" && i.path.length === 0));
      if (meant.length === 0 && branches.every((b) => b.some((i) => i.code === "unrecognized_keys"))) {
        chosen = { ...issue, message: unionMessage(issue) };
      } else {
        const pool = meant.length > 0 ? meant : branches;
        const inner = pool.map((b) => deepestIssue(b));
        const deepest = inner.reduce((a, b) => (b.path.length > a.path.length ? b : a));
        chosen = { ...deepest, path: [...issue.path, ...deepest.path] };
      }
    }
    if (chosen.path.length >= best.path.length) best = chosen;
  }
  return best;
}

function unionMessage(issue: Issue): string {
  const keys = new Set<string>();
  for (const branch of issue.errors ?? []) {
    for (const i of branch) if (i.code === "unrecognized_keys") { for (const k of i.keys ?? []) keys.add(k); }
  }
  return `unknown or misplaced key${keys.size === 1 ? "" : "s"} ${[...keys].map((k) => `"${k}"`).join(", ")}`;
}

function describe(issue: Issue): string {
  if (issue.code === "unrecognized_keys") {
    return `unknown key${(issue.keys?.length ?? 0) > 1 ? "s" : ""} ${
      (issue.keys ?? []).map((k) => `"${k}"`).join(", ")
    }`;
  }
  return issue.message.replace(/^Invalid input: /, "");
}

function nodeAt(doc: ReturnType<typeof parseDocument>, path: (string | number)[]) {
  for (let n = path.length; n >= 0; n--) {
    const node = doc.getIn(path.slice(0, n), true) as { range?: [number, number, number] } | undefined;
    if (node && (isMap(node) || isSeq(node) || node.range)) return node;
  }
  return undefined;
}
