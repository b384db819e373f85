/**
 * The text of an error as a client or a model may see it: its message without stack frames,
 * without paths or file URLs of the installation, and without the "Troubleshooting URL"
 * paragraph LangChain appends. Libraries put these in messages (LangChain's
 * ToolInvocationError quotes the whole stack of the error it wraps); the server log keeps them.
 *
 * @example
 * errorText(new Error("failed\n    at f (file:///opt/app/node_modules/x/index.js:1:2)")); // "failed"
 */

const STACK_FRAME = /^\s*at\s.*$/gm;
const TROUBLESHOOTING = /\s*Troubleshooting URL: \S+\s*$/;
/** A path or file URL that goes through node_modules, or a file URL of the install. */
const INSTALL_PATH = /(?:file:\/\/)?(?:\/[^\s'"`()]*)?\/node_modules\/[^\s'"`()]*|file:\/\/\/[^\s'"`()]*/g;

/** An error's message, fit for a response: see the module comment. */
export function errorText(err: unknown): string {
  const raw = err instanceof Error ? err.message : typeof err === "string" ? err : String(err);
  return raw
    .replace(TROUBLESHOOTING, "")
    .replace(STACK_FRAME, "")
    .replace(INSTALL_PATH, "<internal>")
    .replace(/\n{2,}/g, "\n")
    .trim();
}
