/**
 * A browser module (core/auth/browser.ts) written as several functions instead of one: each
 * part is shipped as its own function's text, and the factory gets them as its third value,
 * so no part names another (a bundler may rename the functions of this file, never what a
 * function receives). Each part, like the factory, must use nothing from outside its own
 * body except types, browser globals and what it is given.
 *
 * @example
 * const parts = { api: myApi, forms: myForms };
 * const factory = (settings, ctx, p: typeof parts) => { const api = p.api(settings); ... };
 * identity: { ui: { module: browserModuleOf(factory, parts) } }
 */
import type { BrowserAuthContext, BrowserAuthDriver } from "../../core/index.ts";

// deno-lint-ignore ban-types -- any function: each is shipped as its text, whatever its signature
type Part = Function;

/**
 * The source of a browser ES module whose default export is `(settings, ctx) => factory(settings, ctx, parts)`.
 * Written here rather than by `browserModule` of core/auth/browser.ts, which ships one function.
 */
export function browserModuleOf<P extends Record<string, Part>>(
  factory: (settings: Record<string, unknown>, ctx: BrowserAuthContext, parts: P) => BrowserAuthDriver,
  parts: P,
): string {
  const list = Object.entries(parts).map(([name, fn]) => `  ${name}: (${expression(name, fn)}),\n`).join("");
  return `export default (settings, ctx) => (${expression("factory", factory)})(settings, ctx, {\n${list}});\n`;
}

/** A function's text as an expression: an arrow function or a `function` expression (not a method shorthand). */
function expression(name: string, fn: Part): string {
  const source = fn.toString().trim();
  if (/^(async\s+)?(function\b|\(|[A-Za-z_$][\w$]*\s*=>)/.test(source)) return source;
  throw new Error(
    `browserModuleOf: part "${name}" is not an arrow function or function expression: ${source.slice(0, 40)}`,
  );
}
