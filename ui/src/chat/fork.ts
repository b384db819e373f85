/**
 * Where to fork a thread to edit or retry a message: the checkpoint just before the message
 * was added (the parent of the oldest state that holds it), read from the thread's history.
 * `submit(input, { checkpoint })` from there starts a new branch; the old one stays in history.
 */
import type { Checkpoint, Client, Message } from "@langchain/langgraph-sdk";

const PAGE = 100;
const MAX_PAGES = 50;

/** The checkpoint before `messageId` entered `threadId`'s state, or null when no state holds it. */
export async function checkpointBefore(client: Client, threadId: string, messageId: string): Promise<Omit<Checkpoint, "thread_id"> | null> {
  let before: { configurable: { checkpoint_id: string } } | undefined;
  let oldest: Checkpoint | null | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const states = await client.threads.getHistory<{ messages?: Message[] }>(threadId, {
      limit: PAGE,
      before,
      select: ["values", "checkpoint", "parent_checkpoint"],
    });
    for (const s of states) {
      // Newest first: the last state seen holding the message is where it entered.
      if (s.values?.messages?.some((m) => m.id === messageId)) oldest = s.parent_checkpoint ?? null;
      else if (oldest && s.checkpoint?.checkpoint_id === oldest.checkpoint_id) return strip(oldest);
    }
    const last = states.at(-1);
    if (states.length < PAGE || !last?.checkpoint?.checkpoint_id) break;
    before = { configurable: { checkpoint_id: last.checkpoint.checkpoint_id } };
  }
  return oldest ? strip(oldest) : null;
}

function strip(c: Checkpoint): Omit<Checkpoint, "thread_id"> {
  const { thread_id: _, ...rest } = c;
  return rest;
}
