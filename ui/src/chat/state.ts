/** The agent state the UI reads (deep agent: messages, todos, files) and small readers for it. */
import type { Message } from "@langchain/langgraph-sdk";

export interface Todo {
  content: string;
  status: "pending" | "in_progress" | "completed";
}

/** deepagents file data: v1 stores lines, v2 a string (or binary). */
export interface FileData {
  content: string | string[] | Record<string, unknown>;
  mimeType?: string;
  created_at?: string;
  modified_at?: string;
}

export interface AgentState extends Record<string, unknown> {
  messages: Message[];
  todos?: Todo[];
  files?: Record<string, FileData | null>;
}

/** The text of a message's content: a string, or the text blocks of a content array. */
export function messageText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((b: unknown) => (typeof b === "string" ? b : b && typeof b === "object" && (b as { type?: string }).type === "text" ? String((b as { text?: unknown }).text ?? "") : ""))
    .join("");
}

/** The text of a file, whichever version of the file format it is in. */
export function fileText(file: FileData | null | undefined): string | null {
  if (!file) return null;
  if (typeof file.content === "string") return file.content;
  if (Array.isArray(file.content)) return file.content.join("\n");
  return null;
}

/** A thread title from the first user message: one line, at most 60 characters. */
export function titleFrom(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > 60 ? `${line.slice(0, 57).trimEnd()}…` : line || "New chat";
}
