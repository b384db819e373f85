/**
 * Subagents: `task` dispatches by name; the subagent has its own prompt and skills (not the
 * main agent's), writes only to its own namespace, cannot see the rest of /memories, and its
 * activity streams as subgraph events.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { makeConfig, makeSubagent, REVIEW_SKILL, userConfigurable } from "./_bundle.ts";
import { contentOf, type Harness, startHarness } from "./_harness.ts";
import { subagentNamespace } from "../../core/harness/namespaces.ts";

const CRITIQUE_SKILL = `---
name: critique
description: Critique an argument step by step (MARKER-SKILL-CRITIQUE).
---
# Critique
Check every premise. CRITIQUE-BODY
`;

let h: Harness;
before(async () => {
  const config = makeConfig({
    skills: [{ name: "review", description: "Review", path: "skills/review" }],
    subagents: [
      makeSubagent({
        name: "critic",
        description: "Critiques drafts (MARKER-CRITIC-DESC)",
        skills: [{ name: "critique", description: "Critique", path: "subagents/critic/skills/critique" }],
      }),
      makeSubagent({ name: "scout", description: "Finds sources" }),
    ],
  });
  h = await startHarness({
    config,
    files: {
      "AGENTS.md": "Main agent. MARKER-MAIN",
      "skills/review/SKILL.md": REVIEW_SKILL,
      "subagents/critic/AGENTS.md": "You are the critic. MARKER-CRITIC",
      "subagents/critic/skills/critique/SKILL.md": CRITIQUE_SKILL,
      "subagents/scout/AGENTS.md": "You are the scout. MARKER-SCOUT",
    },
  });
});
after(async () => {
  await h.dispose();
});

test("the main agent delegates; the subagent uses its own skill and writes to its namespace", async () => {
  h.server.script(
    {
      when: "MARKER-MAIN",
      toolCalls: [{ name: "task", args: { subagent_type: "critic", description: "Critique the draft on tides" } }],
    },
    {
      when: "MARKER-CRITIC",
      toolCalls: [{
        name: "read_file",
        args: { file_path: "/memories/subagents/critic/skills/critique/SKILL.md", limit: 1000 },
      }],
    },
    {
      when: "MARKER-CRITIC",
      toolCalls: [{
        name: "write_file",
        args: { file_path: "/memories/subagents/critic/notes.md", content: "tides draft: weak premise" },
      }],
    },
    { when: "MARKER-CRITIC", toolCalls: [{ name: "read_file", args: { file_path: "/memories/AGENTS.md" } }] },
    {
      when: "MARKER-CRITIC",
      toolCalls: [{ name: "write_file", args: { file_path: "/memories/user/x.md", content: "x" } }],
    },
    { when: "MARKER-CRITIC", text: "CRITIQUE-RESULT: premise two is weak" },
    {
      when: "MARKER-MAIN",
      toolCalls: [{
        name: "write_file",
        args: { file_path: "/memories/subagents/critic/notes.md", content: "overwritten" },
      }],
    },
    { when: "MARKER-MAIN", text: "The critic found a weak premise." },
  );
  const namespaces = new Set<string>();
  let final: any;
  for await (
    const [ns, chunk] of await h.graph.stream(
      { messages: [{ role: "user", content: "critique my draft" }] },
      { configurable: { thread_id: "s1", ...userConfigurable("alice") }, streamMode: "updates", subgraphs: true },
    ) as AsyncIterable<[string[], Record<string, any>]>
  ) {
    namespaces.add(ns.join("|"));
    final = chunk;
  }
  assert.deepEqual(h.server.pending(), [], "every scripted reply was used");
  assert.ok(
    [...namespaces].some((n) => n.startsWith("tools:")),
    `subagent events stream as a subgraph: ${[...namespaces].join(", ")}`,
  );

  const main = h.server.requests.filter((r) => r.system.includes("MARKER-MAIN"));
  const critic = h.server.requests.filter((r) => r.system.includes("MARKER-CRITIC"));
  assert.equal(critic.length, 5);
  assert.ok(main[0].tools.includes("task"));
  assert.match(JSON.stringify(main[0].body.tools), /MARKER-CRITIC-DESC/);
  assert.match(critic[0].system, /MARKER-SKILL-CRITIQUE/);
  assert.doesNotMatch(critic[0].system, /MARKER-SKILL-REVIEW|MARKER-MAIN/);
  assert.ok(!critic[0].tools.includes("task") && !critic[0].tools.includes("write_todos"));
  assert.equal(critic[0].messages[0].content, "Critique the draft on tides");

  const toolResults = critic.at(-1)!.messages.filter((m) => m.role === "tool").map((m) => m.content);
  assert.match(toolResults[0], /CRITIQUE-BODY/);
  assert.match(toolResults[2], /permission denied for read on \/memories\/AGENTS\.md/);
  assert.match(toolResults[3], /permission denied for write on \/memories\/user\/x\.md/);
  assert.equal(
    contentOf(await h.store.get(subagentNamespace("research", "critic"), "/notes.md")),
    "tides draft: weak premise",
  );

  const mainTools = main.at(-1)!.messages.filter((m) => m.role === "tool").map((m) => m.content);
  assert.match(mainTools[0], /CRITIQUE-RESULT/);
  assert.match(mainTools[1], /permission denied for write on \/memories\/subagents\/critic\/notes\.md/);
  assert.ok(final);
});

test("the main agent can read a subagent's memory", async () => {
  await h.store.put(subagentNamespace("research", "scout"), "/sources.md", {
    content: "SOURCE-LIST",
    mimeType: "text/markdown",
    created_at: "",
    modified_at: "",
  });
  h.server.script(
    {
      when: "MARKER-MAIN",
      toolCalls: [{ name: "read_file", args: { file_path: "/memories/subagents/scout/sources.md" } }],
    },
    { when: "MARKER-MAIN", text: "read" },
  );
  const out = await h.run("what did the scout find?", { thread_id: "s2", ...userConfigurable("alice") });
  assert.match(JSON.stringify(out.messages.find((m) => m.getType() === "tool")!.content), /SOURCE-LIST/);
});
