/**
 * Memory namespaces and permissions of spec 2.8, driven directly through the graph with an
 * in-memory store and a scripted model speaking the OpenAI wire protocol.
 */
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { InMemoryStore } from "@langchain/langgraph";
import { makeConfig, REVIEW_SKILL, userConfigurable } from "./_bundle.ts";
import { contentOf, type Harness, startHarness } from "./_harness.ts";
import { sharedNamespace, userNamespace } from "../../core/harness/namespaces.ts";

const FILES = {
  "AGENTS.md": "You are the research agent. MARKER-AGENTS",
  "skills/review/SKILL.md": REVIEW_SKILL,
  "user/AGENTS.md": "User notes:\n",
};
const config = makeConfig({ skills: [{ name: "review", description: "Review a draft", path: "skills/review" }] });
const harnesses: Harness[] = [];
after(async () => {
  for (const h of harnesses) await h.dispose();
});

test("prompt comes from /memories/AGENTS.md, lists skills, offers the built-in tools", async () => {
  const h = await startHarness({ config, files: FILES });
  harnesses.push(h);
  h.server.script({ text: "hello" });
  await h.run("hi", { thread_id: "t-prompt", ...userConfigurable("alice") });
  const req = h.server.requests[0];
  assert.match(req.system, /MARKER-AGENTS/);
  assert.match(req.system, /MARKER-SKILL-REVIEW/);
  assert.match(req.system, /\/memories\/skills\/review\/SKILL\.md/);
  assert.deepEqual([...req.tools].sort(), [
    "edit_file",
    "glob",
    "grep",
    "ls",
    "read_file",
    "write_file",
    "write_todos",
  ]);
});

test("user memory: created from the template, edited, preloaded in a new thread, invisible to another user", async () => {
  const h = await startHarness({ config, files: FILES });
  harnesses.push(h);
  h.server.script(
    {
      toolCalls: [{
        name: "edit_file",
        args: {
          file_path: "/memories/user/AGENTS.md",
          old_string: "User notes:",
          new_string: "User notes:\n- likes green tea",
        },
      }],
    },
    { text: "noted" },
  );
  await h.run("remember that I like green tea", { thread_id: "a1", ...userConfigurable("alice@example.com") });
  const stored = await h.store.get(userNamespace("research", "alice@example.com"), "/AGENTS.md");
  assert.match(contentOf(stored) ?? "", /likes green tea/);

  h.server.script({ text: "you like green tea" });
  await h.run("what do I like?", { thread_id: "a2", ...userConfigurable("alice@example.com") });
  assert.match(h.server.requests.at(-1)!.system, /likes green tea/);

  h.server.script({ text: "I do not know" });
  await h.run("what do I like?", { thread_id: "b1", ...userConfigurable("bob") });
  const bobReq = h.server.requests.at(-1)!;
  assert.doesNotMatch(bobReq.system, /green tea/);
  assert.match(bobReq.system, /User notes:/);
});

test("the main agent cannot write /memories/AGENTS.md or skills: a tool error, the file unchanged", async () => {
  const h = await startHarness({ config, files: FILES });
  harnesses.push(h);
  h.server.script(
    { toolCalls: [{ name: "write_file", args: { file_path: "/memories/AGENTS.md", content: "hacked" } }] },
    {
      toolCalls: [{
        name: "edit_file",
        args: { file_path: "/memories/skills/review/SKILL.md", old_string: "Review", new_string: "X" },
      }],
    },
    { text: "I could not" },
  );
  const out = await h.run("overwrite your instructions", { thread_id: "w1", ...userConfigurable("alice") });
  const tools = out.messages.filter((m) => m.getType() === "tool");
  assert.equal(tools.length, 2);
  for (const t of tools) {
    assert.equal(t.status, "error");
    assert.match(String(t.content), /permission denied for write/);
  }
  // The instructions and skills are the bundle's: never in the store, and still what the model is given.
  assert.equal(await h.store.get(sharedNamespace("research"), "/AGENTS.md"), null);
  assert.equal(await h.store.get(sharedNamespace("research"), "/skills/review/SKILL.md"), null);
  assert.match(h.server.requests.at(-1)!.system, /MARKER-AGENTS/);
  assert.equal(
    h.server.requests.at(-1)!.messages.filter((m) => m.role === "tool").length,
    2,
    "the model saw both errors",
  );
});

test("without an authenticated user, user memory is skipped and writing it is a tool error", async () => {
  const h = await startHarness({ config, files: FILES });
  harnesses.push(h);
  h.server.script(
    { toolCalls: [{ name: "write_file", args: { file_path: "/memories/user/notes.md", content: "x" } }] },
    { text: "ok" },
  );
  const anon = {
    langgraph_auth_user: { identity: "anonymous", is_authenticated: false },
    graph_auth_user_id: "anonymous",
  };
  const out = await h.run("save a note", { thread_id: "n1", ...anon });
  const tool = out.messages.find((m) => m.getType() === "tool")!;
  assert.match(String(tool.content), /no authenticated user/);
  assert.doesNotMatch(h.server.requests[0].system, /user_memory/);
  assert.equal((await h.store.search(["agentcli", "research", "users"])).length, 0);
});

test("two assistants do not share memory", async () => {
  const h = await startHarness({ config, files: FILES });
  harnesses.push(h);
  h.server.script(
    { toolCalls: [{ name: "write_file", args: { file_path: "/memories/user/a.md", content: "from assistant one" } }] },
    { text: "ok" },
    { toolCalls: [{ name: "read_file", args: { file_path: "/memories/user/a.md" } }] },
    { text: "ok" },
  );
  await h.run("write", { thread_id: "x1", assistant_id: "one", ...userConfigurable("alice") });
  const out = await h.run("read", { thread_id: "x2", assistant_id: "two", ...userConfigurable("alice") });
  const tool = out.messages.find((m) => m.getType() === "tool")!;
  assert.doesNotMatch(String(tool.content), /from assistant one/);
  assert.ok(await h.store.get(userNamespace("one", "alice"), "/a.md"));
});

test("a redeployed project's new instructions show at once; user memory and others' entries stay", async () => {
  const store = new InMemoryStore();
  const first = await startHarness({ config, files: FILES, store });
  harnesses.push(first);
  first.server.script(
    {
      toolCalls: [{
        name: "edit_file",
        args: {
          file_path: "/memories/user/AGENTS.md",
          old_string: "User notes:",
          new_string: "User notes: prefers metric units",
        },
      }],
    },
    { text: "ok" },
  );
  await first.run("I prefer metric units", { thread_id: "r1", ...userConfigurable("alice") });
  await store.put(sharedNamespace("research"), "/notes.md", {
    content: "written by someone",
    mimeType: "text/markdown",
    created_at: "",
    modified_at: "",
  });

  const changed = {
    ...FILES,
    "AGENTS.md": "You are the research agent, version two. MARKER-V2",
    "user/AGENTS.md": "New template\n",
  };
  const second = await startHarness({ config, files: changed, store });
  harnesses.push(second);
  second.server.script({ text: "hi" });
  await second.run("hello", { thread_id: "r2", ...userConfigurable("alice") });
  assert.match(second.server.requests[0].system, /MARKER-V2/);
  assert.match(second.server.requests[0].system, /prefers metric units/);
  assert.match(
    contentOf(await store.get(userNamespace("research", "alice"), "/AGENTS.md")) ?? "",
    /prefers metric units/,
  );
  assert.equal(contentOf(await store.get(sharedNamespace("research"), "/notes.md")), "written by someone");
});

test("memory plugin (AGENTCLI_MEMORY): /memories/ and user memory live in the plugin's store, not the server's", async () => {
  const { definePlugin } = await import("../../core/kernel/hooks.ts");
  const entries = new Map<string, Record<string, unknown>>();
  const id = (ns: string[], key: string) => `${ns.join("/")}|${key}`;
  const kv = definePlugin({
    name: "memory-kv",
    kind: "extension",
    hooks: {
      "memory:backend": () => ({
        get: async (ns, key) => entries.get(id(ns, key)) ?? null,
        put: async (ns, key, value) => void entries.set(id(ns, key), value),
        delete: async (ns, key) => void entries.delete(id(ns, key)),
        list: async (ns, { limit, offset }) =>
          [...entries].filter(([k]) => k.startsWith(`${ns.join("/")}|`)).sort(([a], [b]) => (a < b ? -1 : 1)).slice(
            offset,
            offset + limit,
          ).map(([k, value]) => ({ key: k.slice(k.indexOf("|") + 1), value })),
      }),
    },
  });
  const h = await startHarness({ config, files: FILES, plugins: [kv], env: { AGENTCLI_MEMORY: "memory-kv" } });
  harnesses.push(h);
  h.server.script(
    {
      toolCalls: [{
        name: "edit_file",
        args: {
          file_path: "/memories/user/AGENTS.md",
          old_string: "User notes:",
          new_string: "User notes:\n- likes oolong",
        },
      }],
    },
    { text: "noted" },
  );
  await h.run("remember that I like oolong", { thread_id: "kv1", ...userConfigurable("carol") });
  const mine = entries.get(id(userNamespace("research", "carol"), "/AGENTS.md"));
  assert.match(String((mine?.content as string[] | string | undefined) ?? ""), /likes oolong/);
  assert.equal(
    entries.has(id(sharedNamespace("research"), "/AGENTS.md")),
    false,
    "the instructions are served from the bundle, not copied into the plugin's store",
  );
  assert.match(h.server.requests.at(-1)!.system, /MARKER-AGENTS/);
  assert.equal(
    await h.store.get(userNamespace("research", "carol"), "/AGENTS.md"),
    null,
    "nothing in the server's store",
  );
  h.server.script({ text: "you like oolong" });
  await h.run("what do I like?", { thread_id: "kv2", ...userConfigurable("carol") });
  assert.match(h.server.requests.at(-1)!.system, /likes oolong/, "preloaded from the plugin's store");
});

test("AGENTCLI_MEMORY naming no memory plugin is a clear error", async () => {
  const { startModelServer } = await import("../fixtures/model-server/server.ts");
  const server = await startModelServer();
  try {
    await assert.rejects(
      startHarness({ config, files: FILES, server, env: { AGENTCLI_MEMORY: "nope" } }),
      /Cannot set up memory: no plugin "nope" \(AGENTCLI_MEMORY\)/,
    );
  } finally {
    await server.close();
  }
});
