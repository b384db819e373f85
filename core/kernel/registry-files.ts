/**
 * A LangGraph.js project's registry settings: the `.npmrc` (npm, pnpm, yarn 1), `.yarnrc`
 * (yarn 1) and `.yarnrc.yml` (yarn 2+) of a folder its `dependencies` install. `deploy` puts
 * them in the bundle (the one exception to "dotfiles are skipped"), so the control plane's
 * install reaches a private or scoped registry. A credential in them must be a `${VAR}`
 * reference, its value a secret of the deployment: a literal one would travel in the bundle in
 * clear, and is refused by `deploy` and by the control plane's build, naming the file and line.
 *
 * @example
 * literalCredentials(".npmrc", "//npm.acme.example/:_authToken=abc123\n"); // [{ line: 1, key: "//npm.acme.example/:_authToken" }]
 * variableReferences("//npm.acme.example/:_authToken=${NPM_TOKEN}\n"); // [{ line: 1, name: "NPM_TOKEN" }]
 */

/** The registry settings files of an install folder. */
export const REGISTRY_FILES = [".npmrc", ".yarnrc", ".yarnrc.yml"] as const;

/** Keys whose value is a credential: npm's and yarn 1's `_authToken`, `_auth`, `_password`; yarn 2+'s `npmAuthToken`, `npmAuthIdent`. */
const CREDENTIAL_KEY = /(^|:|\b)(_authToken|_auth|_password|npmAuthToken|npmAuthIdent)$/;
/** `${VAR}`, and the forms managers also expand (`${VAR?}`, `${VAR:-default}`): each names a variable. */
const REFERENCE = /\$\{([^}]*)\}/g;

/** A line of the file as a key and value (`key=value`, `key value`, `key: value`), or null for a comment or a blank line. */
function entry(name: string, raw: string): { key: string; value: string } | null {
  const text = raw.trim();
  if (!text || text.startsWith("#") || text.startsWith(";")) return null;
  const m = name === ".yarnrc.yml"
    ? text.match(/^(["']?)([^"':]+)\1\s*:\s*(.*)$/)
    : name === ".yarnrc"
    ? text.match(/^(["']?)(\S+?)\1\s+(.*)$/)
    : text.match(/^()([^=]+?)\s*=\s*(.*)$/);
  if (!m) return null;
  return { key: m[2]!.trim(), value: m[3]!.trim().replace(/^(["'])(.*)\1$/, "$2") };
}

/** The line of a file named `name` as a credential's key and value, or null when it sets no credential. */
export function credentialEntry(name: string, raw: string): { key: string; value: string } | null {
  const e = entry(name, raw);
  return e && CREDENTIAL_KEY.test(e.key) ? e : null;
}

/** The lines of `text` (a file named `name`) that hold a credential in clear, not as a `${VAR}` reference. */
export function literalCredentials(name: string, text: string): Array<{ line: number; key: string }> {
  const out: Array<{ line: number; key: string }> = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const e = credentialEntry(name, raw);
    if (!e?.value) return;
    const rest = e.value.replace(REFERENCE, "");
    if (rest === e.value || /[^:\s]/.test(rest)) out.push({ line: i + 1, key: e.key });
  });
  return out;
}

/**
 * The `${VAR}` references of `text` (comments left out), in order, with their line. Every form
 * counts, as the manager expands it from its own environment: an install gives it only
 * variables of the deployment's secrets, so none of the control plane's can be read through one.
 */
export function variableReferences(text: string): Array<{ line: number; name: string }> {
  const out: Array<{ line: number; name: string }> = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    if (/^\s*[#;]/.test(raw)) return;
    for (const m of raw.matchAll(REFERENCE)) out.push({ line: i + 1, name: m[1]!.replace(/\?$|:?-[^]*$/, "").trim() });
  });
  return out;
}
