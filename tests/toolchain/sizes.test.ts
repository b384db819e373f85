/**
 * Files that fit in a head (issue 32, docs/architecture.md "Step 6"): no source file of core/,
 * plugins/ or bin/ over 400 lines, no function over 150 lines, and no function taking more than
 * three values (an options object instead) unless a library dictates its parameters, as the
 * exemptions below say one by one. The TypeScript parser finds the functions.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";

const ROOT = new URL("../..", import.meta.url).pathname;
const MAX_FILE_LINES = 400;
const MAX_FUNCTION_LINES = 150;
const MAX_PARAMS = 3;

/**
 * Functions whose parameters a library fixes (file:function -> why). A new entry needs the same:
 * the interface it implements.
 */
const PARAMS_EXEMPT: Record<string, string> = {
  "core/engine/tracing/run-tracer.ts:handleChainStart": "LangChain's BaseCallbackHandler method",
  "core/engine/tracing/run-tracer.ts:handleChatModelStart": "LangChain's BaseCallbackHandler method",
  "core/engine/tracing/run-tracer.ts:handleToolStart": "LangChain's BaseCallbackHandler method",
  "core/engine/tracing/run-tracer.ts:handleLLMStart": "LangChain's BaseCallbackHandler method",
  "core/engine/tracing/span-recorder.ts:handleChainStart": "LangChain's BaseCallbackHandler method",
  "core/engine/tracing/span-recorder.ts:handleChatModelStart": "LangChain's BaseCallbackHandler method",
  "core/engine/tracing/span-recorder.ts:handleToolStart": "LangChain's BaseCallbackHandler method",
  "core/engine/tracing/span-recorder.ts:handleLLMStart": "LangChain's BaseCallbackHandler method",
  "core/engine/usage/recorder.ts:handleChatModelStart": "LangChain's BaseCallbackHandler method",
  "core/engine/usage/recorder.ts:handleLLMStart": "LangChain's BaseCallbackHandler method",
  "core/storage/checkpointer.ts:put": "LangGraph's BaseCheckpointSaver.put",
  "core/storage/checkpointer.ts:putWrites": "LangGraph's BaseCheckpointSaver.putWrites",
  "core/engine/executor/checkpointer.ts:put": "LangGraph's BaseCheckpointSaver.put",
  "core/engine/executor/checkpointer.ts:putWrites": "LangGraph's BaseCheckpointSaver.putWrites",
};

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.(ts|js)$/.test(e.name) && !e.name.endsWith(".d.ts"))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)).split("\\").join("/"));
}

const FILES = ["core", "plugins", "bin"].flatMap(sources);

interface Fn {
  file: string;
  name: string;
  line: number;
  lines: number;
  params: number;
}

function nameOf(node: ts.SignatureDeclaration): string {
  if (node.name && !ts.isComputedPropertyName(node.name)) return node.name.getText();
  const p = node.parent;
  if (p && (ts.isVariableDeclaration(p) || ts.isPropertyAssignment(p) || ts.isPropertyDeclaration(p))) {
    return p.name.getText();
  }
  return "<anonymous>";
}

function functions(file: string): Fn[] {
  const text = readFileSync(join(ROOT, file), "utf8");
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const out: Fn[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && "body" in node && node.body) {
      const start = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
      const end = sf.getLineAndCharacterOfPosition(node.getEnd()).line;
      const params = node.parameters.filter((p) => p.name.getText() !== "this").length;
      out.push({ file, name: nameOf(node), line: start + 1, lines: end - start + 1, params });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

const ALL = FILES.flatMap(functions);

test(`no source file is over ${MAX_FILE_LINES} lines`, () => {
  const long = FILES.map((f) => ({ f, n: readFileSync(join(ROOT, f), "utf8").split("\n").length - 1 }))
    .filter(({ n }) => n > MAX_FILE_LINES).map(({ f, n }) => `${f}: ${n} lines`);
  assert.deepEqual(long, [], "split these by what their parts do");
});

test(`no function is over ${MAX_FUNCTION_LINES} lines`, () => {
  const long = ALL.filter((f) => f.lines > MAX_FUNCTION_LINES).map((f) => `${f.file}:${f.line} ${f.name}: ${f.lines}`);
  assert.deepEqual(long, [], "split these by what they do");
});

test(`a function takes at most ${MAX_PARAMS} values, or an options object`, () => {
  const many = ALL.filter((f) => f.params > MAX_PARAMS && !(`${f.file}:${f.name}` in PARAMS_EXEMPT))
    .map((f) => `${f.file}:${f.line} ${f.name}: ${f.params} parameters`);
  assert.deepEqual(many, [], "give these an options object (or, for a library's interface, an entry in PARAMS_EXEMPT)");
  const stale = Object.keys(PARAMS_EXEMPT).filter((k) => !ALL.some((f) => `${f.file}:${f.name}` === k));
  assert.deepEqual(stale, [], "these exemptions name no function any more: remove them");
});
