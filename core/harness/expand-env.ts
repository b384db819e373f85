/**
 * Expands `${VAR}` references (kept verbatim in `mcp.json`) from the run environment.
 * An unresolved reference is a clear error naming the variable and where it was used.
 */
import type { Env } from "../hooks.ts";
import { userError } from "../errors.ts";

const REF = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** Expands every `${VAR}` in `value`; `where` names the place for the error message. */
export function expandEnv(value: string, env: Env, where: string): string {
  const missing: string[] = [];
  const out = value.replace(REF, (_, name: string) => {
    const v = env[name];
    if (v === undefined) {
      missing.push(name);
      return "";
    }
    return v;
  });
  if (missing.length > 0) {
    throw userError("CREDENTIALS_MISSING", {
      message: `Cannot expand ${where}: ${missing.map((m) => `\${${m}}`).join(", ")} ${missing.length > 1 ? "are" : "is"} not set`,
      hint: `Add ${missing.join(", ")} to .env (or the deployment's secrets).`,
      status: 422,
    });
  }
  return out;
}
