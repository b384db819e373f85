/** The results of `agentcli eval`: a table for the terminal, JUnit XML and JSON for CI. */
import type { CaseResult } from "./runner.ts";

/** One row per case (status, time, turns, tool calls), then each failed check with its reason. */
export function resultsTable(results: readonly CaseResult[]): string {
  const rows = results.map((r) => [
    r.passed ? "PASS" : "FAIL",
    r.name,
    `${(r.durationMs / 1000).toFixed(1)}s`,
    String(r.turns.length),
    String(r.toolCalls.length),
    r.status ?? "-",
  ]);
  const head = ["RESULT", "CASE", "TIME", "TURNS", "TOOL CALLS", "LAST RUN"];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd();
  const out = [line(head), ...rows.map(line)];
  for (const r of results.filter((r) => !r.passed)) {
    out.push("", `${r.name} (${r.file}):`);
    if (r.error) out.push(`  could not run: ${r.error}`);
    for (const c of r.checks.filter((c) => !c.passed)) out.push(`  ${r.file}:${c.line} ${c.check}: ${c.reason}`);
    if (r.toolCalls.length) {
      out.push(`  tool calls: ${r.toolCalls.map((t) => `${t.name} (turn ${t.turn})`).join(", ")}`);
    }
  }
  const failed = results.filter((r) => !r.passed).length;
  out.push("", `${results.length - failed} passed, ${failed} failed`);
  return out.join("\n");
}

/** JUnit XML: one testsuite, a testcase per case, a failure naming each failed check. */
export function resultsJunit(results: readonly CaseResult[], suite = "agentcli eval"): string {
  const failed = results.filter((r) => !r.passed).length;
  const seconds = (ms: number) => (ms / 1000).toFixed(3);
  const total = results.reduce((s, r) => s + r.durationMs, 0);
  const cases = results.map((r) => {
    const open = `  <testcase name="${xml(r.name)}" classname="${xml(r.file)}" time="${seconds(r.durationMs)}"`;
    if (r.passed) return `${open}/>`;
    const reasons = r.error
      ? [`could not run: ${r.error}`]
      : r.checks.filter((c) => !c.passed).map((c) => `${r.file}:${c.line} ${c.check}: ${c.reason}`);
    return `${open}>\n    <failure message="${xml(reasons[0] ?? "failed")}">${
      xml(reasons.join("\n"))
    }</failure>\n  </testcase>`;
  });
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuite name="${
    xml(suite)
  }" tests="${results.length}" failures="${failed}" errors="0" time="${seconds(total)}">\n${
    cases.join("\n")
  }\n</testsuite>\n`;
}

/** The JSON report: totals and every case with its turns, tool calls and checks. */
export function resultsJson(results: readonly CaseResult[]): string {
  const failed = results.filter((r) => !r.passed).length;
  return `${
    JSON.stringify({ total: results.length, passed: results.length - failed, failed, cases: results }, null, 2)
  }\n`;
}

function xml(text: string): string {
  return text.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`).replace(
    // deno-lint-ignore no-control-regex
    /[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g,
    "",
  );
}
