/**
 * The permission table of spec 2.8 as file-tool rules (first match wins). Enforced by the
 * file tools on every call: a denied read or write is a tool error the model sees.
 *
 * | Path                            | Main agent   | Subagent `<name>`        |
 * |---------------------------------|--------------|--------------------------|
 * | `/memories/AGENTS.md`           | read         | no access                |
 * | `/memories/skills/**`           | read         | no access                |
 * | `/memories/user/**`             | read + write | no access                |
 * | `/memories/subagents/<name>/**` | read         | read + write (own only)  |
 */
import type { FilesystemPermission } from "deepagents";

/** Rules of the main agent: writes under `/memories` only in `/memories/user/**`. */
export function mainAgentPermissions(): FilesystemPermission[] {
  return [
    { operations: ["write"], paths: ["/memories/user/**"], mode: "allow" },
    { operations: ["write"], paths: ["/memories/**"], mode: "deny" },
  ];
}

/** Rules of a subagent: its own namespace only; the rest of `/memories` is invisible. */
export function subagentPermissions(name: string): FilesystemPermission[] {
  return [
    {
      operations: ["read", "write"],
      paths: [`/memories/subagents/${name}`, `/memories/subagents/${name}/**`],
      mode: "allow",
    },
    { operations: ["read", "write"], paths: ["/memories", "/memories/**"], mode: "deny" },
  ];
}
