/**
 * The command reference (docs/commands.md, and docs/control-plane.md for `platform serve`) and
 * each command's `--help` agree: the usage line is the
 * same text, and every option, default and environment variable the help names appears in
 * the the docs' section for that command. Within a help, the usage line and the options list
 * name each option with the same placeholder.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { test } from "node:test";
import { cli } from "./_project.ts";

const README = ["../../docs/commands.md", "../../docs/control-plane.md"].map((f) =>
  readFileSync(new URL(f, import.meta.url), "utf8")
).join("\n");

interface Help {
  usage: string;
  options: Array<{ name: string; placeholder: string | null; description: string; default: string | null }>;
}

function help(args: string[]): Help {
  const r = cli([...args, "--help"], { cwd: tmpdir() });
  assert.equal(r.code, 0, r.output);
  const usage = /^Usage: (.+)$/m.exec(r.stdout)?.[1];
  assert.ok(usage, `no usage line in:\n${r.stdout}`);
  const options = r.stdout.slice(r.stdout.indexOf("Options:")).split("\n").slice(1).flatMap((line) => {
    const m = /^ {2}(--[a-z-]+)(?: (\S+))?\s{2,}(.*)$/.exec(line);
    if (!m || m[1] === "--help") return [];
    const def = /\(default: (.+)\)$/.exec(m[3]!)?.[1] ?? null;
    return [{ name: m[1]!, placeholder: m[2] ?? null, description: m[3]!, default: def }];
  });
  return { usage, options };
}

/** The README text from the line that shows `usage` in backticks to the next heading. */
function section(usage: string): string {
  const at = README.indexOf(`\`${usage}\``);
  assert.ok(at >= 0, `docs/commands.md shows no \`${usage}\` (the usage line of --help)`);
  const next = README.slice(at).search(/\n#{2,3} /);
  return README.slice(at, next < 0 ? undefined : at + next);
}

/** Parts of a default the README must show: the whole value, or its variables, URLs and numbers. */
function defaultParts(value: string): string[] {
  if (!/\s/.test(value)) return [value];
  return value.match(/\$[A-Z_]+|https?:\/\/\S+|\b\d+\b/g) ?? [value];
}

for (
  const args of [
    ["init"],
    ["dev"],
    ["deploy"],
    ["serve"],
    ["platform", "serve"],
    ["platform", "usage"],
    ["schema"],
    ["router"],
  ]
) {
  test(`README and \`agentcli ${args.join(" ")} --help\` agree`, () => {
    const h = help(args);
    for (const o of h.options) {
      // An optional option in brackets, a required one (`agentcli router --serving <url>`) bare.
      const inUsage = new RegExp(`\\[${o.name}(?: ([^\\]]+))?\\]`).exec(h.usage) ??
        new RegExp(`(?:^| )${o.name}(?: (<[^>]+>))?(?= |$)`).exec(h.usage);
      assert.ok(inUsage, `the usage line "${h.usage}" omits ${o.name}`);
      assert.equal(
        inUsage[1] ?? null,
        o.placeholder,
        `${o.name}: the usage line says "${inUsage[1]}", the options list "${o.placeholder}"`,
      );
    }
    const text = section(h.usage);
    for (const o of h.options) {
      assert.ok(text.includes(o.name), `the docs' section for "${h.usage}" does not mention ${o.name}`);
      for (const part of o.default ? defaultParts(o.default) : []) {
        assert.ok(text.includes(part), `the docs' section for "${h.usage}" does not state ${o.name}'s default ${part}`);
      }
      for (const v of o.description.match(/\$[A-Z_]+/g) ?? []) {
        assert.ok(text.includes(v.slice(1)), `the docs' section for "${h.usage}" does not mention ${v} (${o.name})`);
      }
    }
  });
}
