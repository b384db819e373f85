/**
 * Instructions and skills are each revision's own (issue 37): two graphs of different bundles
 * on one store (two revisions of a deployment sharing its database) each prompt with their own
 * `AGENTS.md` and skills, whichever started last; copies an earlier agentcli seeded into the
 * store are hidden unless someone changed them; what a subagent writes over its bundle file is
 * memory and wins.
 */
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { InMemoryStore } from "@langchain/langgraph";
import { makeConfig, makeSubagent, REVIEW_SKILL, userConfigurable } from "./_bundle.ts";
import { contentOf, type Harness, startHarness } from "./_harness.ts";
import { sharedNamespace, subagentNamespace } from "../../core/harness/namespaces.ts";

const SUMMARY_SKILL = `---
name: summary
description: Summarize a source (MARKER-SKILL-SUMMARY).
---
# Summary
`;
const config = (skill: "review" | "summary") =>
  makeConfig({
    skills: [{ name: skill, description: skill, path: `skills/${skill}` }],
    subagents: [makeSubagent({ name: "critic", description: "Critiques drafts" })],
  });
const files = (version: string, skill: "review" | "summary") => ({
  "AGENTS.md": `Main agent ${version}. MARKER-MAIN-${version}`,
  [`skills/${skill}/SKILL.md`]: skill === "review" ? REVIEW_SKILL : SUMMARY_SKILL,
  "subagents/critic/AGENTS.md": `You are the critic ${version}. MARKER-CRITIC-${version}`,
});
const harnesses: Harness[] = [];
after(async () => {
  for (const h of harnesses) await h.dispose();
});

const sha = (text: string) => createHash("sha256").update(text).digest("hex");
const fileValue = (content: string, seed?: string) => ({
  content,
  mimeType: "text/markdown",
  created_at: "2026-01-01T00:00:00.000Z",
  modified_at: "2026-01-01T00:00:00.000Z",
  ...(seed === undefined ? {} : { seed_sha256: sha(seed) }),
});

test("two revisions on one store each prompt with their own AGENTS.md and skills, whichever started last", async () => {
  const store = new InMemoryStore();
  const v1 = await startHarness({ config: config("review"), files: files("V1", "review"), store });
  harnesses.push(v1);
  v1.server.script({ text: "v1 answers" });
  await v1.run("hi", { thread_id: "t1", ...userConfigurable("alice") });
  // A candidate starts on the same database (a gated revision, a canary) and serves a run.
  const v2 = await startHarness({ config: config("summary"), files: files("V2", "summary"), store });
  harnesses.push(v2);
  v2.server.script({ text: "v2 answers" });
  await v2.run("hi", { thread_id: "t2", ...userConfigurable("alice") });
  v1.server.script({ text: "v1 again" });
  await v1.run("hi again", { thread_id: "t1", ...userConfigurable("alice") });

  const [first, again] = [v1.server.requests[0]!, v1.server.requests.at(-1)!];
  for (const req of [first, again]) {
    assert.match(req.system, /MARKER-MAIN-V1/);
    assert.match(req.system, /MARKER-SKILL-REVIEW/);
    assert.doesNotMatch(req.system, /MARKER-MAIN-V2|MARKER-SKILL-SUMMARY/);
  }
  const other = v2.server.requests[0]!;
  assert.match(other.system, /MARKER-MAIN-V2/);
  assert.match(other.system, /MARKER-SKILL-SUMMARY/);
  assert.doesNotMatch(other.system, /MARKER-MAIN-V1|MARKER-SKILL-REVIEW/);
  assert.deepEqual(
    (await store.search(sharedNamespace("research"))).map((i) => i.key),
    [],
    "nothing of either bundle is copied into the store",
  );
});

test("the agent reads and lists its bundle's files under /memories", async () => {
  const store = new InMemoryStore();
  await store.put(sharedNamespace("research"), "/notes.md", fileValue("NOTES-FROM-SOMEONE"));
  const h = await startHarness({ config: config("review"), files: files("V1", "review"), store });
  harnesses.push(h);
  h.server.script(
    { toolCalls: [{ name: "read_file", args: { file_path: "/memories/AGENTS.md" } }] },
    { toolCalls: [{ name: "glob", args: { pattern: "**/*.md", path: "/memories/" } }] },
    { text: "done" },
  );
  const out = await h.run("what are your files?", { thread_id: "f1", ...userConfigurable("alice") });
  const [read, listed] = out.messages.filter((m) => m.getType() === "tool").map((m) => JSON.stringify(m.content));
  assert.match(read!, /MARKER-MAIN-V1/);
  assert.match(listed!, /\/memories\/AGENTS\.md/);
  assert.match(listed!, /\/memories\/skills\/review\/SKILL\.md/);
  assert.match(listed!, /\/memories\/notes\.md/);
});

test("copies an earlier version seeded are hidden; a seeded copy the subagent edited is its memory and wins", async () => {
  const store = new InMemoryStore();
  const old = "Main agent V0. MARKER-MAIN-V0";
  await store.put(sharedNamespace("research"), "/AGENTS.md", fileValue(old, old));
  await store.put(sharedNamespace("research"), "/skills/old/SKILL.md", fileValue(SUMMARY_SKILL, SUMMARY_SKILL));
  const critic = "You are the critic V0. MARKER-CRITIC-V0";
  await store.put(
    subagentNamespace("research", "critic"),
    "/AGENTS.md",
    fileValue(`${critic} EDITED-BY-CRITIC`, critic),
  );
  const h = await startHarness({ config: config("review"), files: files("V1", "review"), store });
  harnesses.push(h);
  h.server.script(
    {
      when: "MARKER-MAIN-V1",
      toolCalls: [{ name: "task", args: { subagent_type: "critic", description: "Critique it" } }],
    },
    { when: "EDITED-BY-CRITIC", text: "critique done" },
    { when: "MARKER-MAIN-V1", text: "done" },
  );
  await h.run("critique", { thread_id: "s1", ...userConfigurable("alice") });
  const main = h.server.requests[0]!;
  assert.doesNotMatch(main.system, /MARKER-MAIN-V0|MARKER-SKILL-SUMMARY/);
  assert.match(main.system, /MARKER-SKILL-REVIEW/);
  const sub = h.server.requests.find((r) => r.system.includes("EDITED-BY-CRITIC"));
  assert.ok(sub, "the subagent's edited copy is its prompt");
  assert.doesNotMatch(sub.system, /MARKER-CRITIC-V1/);
  assert.equal(contentOf(await store.get(sharedNamespace("research"), "/AGENTS.md")), old, "left in place");
});

test("a file the subagent writes over its bundle file is memory: every revision sees it", async () => {
  const store = new InMemoryStore();
  const v1 = await startHarness({ config: config("review"), files: files("V1", "review"), store });
  harnesses.push(v1);
  v1.server.script(
    {
      when: "MARKER-MAIN-V1",
      toolCalls: [{ name: "task", args: { subagent_type: "critic", description: "Remember to be brief" } }],
    },
    {
      when: "MARKER-CRITIC-V1",
      toolCalls: [{
        name: "edit_file",
        args: {
          file_path: "/memories/subagents/critic/AGENTS.md",
          old_string: "You are the critic V1.",
          new_string: "You are the critic V1. Be brief (LEARNED).",
        },
      }],
    },
    { when: "LEARNED", text: "noted" },
    { when: "MARKER-MAIN-V1", text: "done" },
  );
  await v1.run("teach the critic", { thread_id: "w1", ...userConfigurable("alice") });
  assert.deepEqual(v1.server.pending(), []);
  assert.match(contentOf(await store.get(subagentNamespace("research", "critic"), "/AGENTS.md")) ?? "", /LEARNED/);

  const v2 = await startHarness({ config: config("summary"), files: files("V2", "summary"), store });
  harnesses.push(v2);
  v2.server.script(
    { when: "MARKER-MAIN-V2", toolCalls: [{ name: "task", args: { subagent_type: "critic", description: "Go" } }] },
    { when: "LEARNED", text: "brief critique" },
    { when: "MARKER-MAIN-V2", text: "done" },
  );
  await v2.run("critique", { thread_id: "w2", ...userConfigurable("alice") });
  assert.deepEqual(v2.server.pending(), [], "the other revision's critic prompts with what it learned");
});
