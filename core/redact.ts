/**
 * Secret redaction for text that leaves the process or reaches a model: upstream error
 * messages (a provider quoting the API key it was given), run errors, stream events, log
 * lines and tool errors. Two nets: every secret value the deployment was given (registered
 * once at start from its environment) and anything shaped like a credential (provider key
 * prefixes, bearer tokens, JWTs, `api_key=...` pairs).
 *
 * @example
 * registerSecrets(secretValues(process.env));
 * redact("401: Incorrect API key provided: sk-abc...xyz"); // "401: Incorrect API key provided: [redacted]"
 */

/** What replaces a secret. */
export const REDACTED = "[redacted]";

/** Variable names whose values are secrets (besides the project's declared ones). */
const SECRET_NAME = /(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|PRIVATE|AUTH)/i;

/** Shorter values are too likely to be ordinary words or numbers to replace everywhere. */
const MIN_SECRET_LENGTH = 8;

/** Credential shapes, redacted wherever they appear. */
const SHAPES: RegExp[] = [
  /\b(?:sk|rk|pk)-(?:[A-Za-z0-9]+-)*[A-Za-z0-9_-]{16,}/g, // OpenAI, Anthropic (sk-ant-...), OpenRouter (sk-or-...)
  /\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}/g,
  /\bsb_(?:secret|publishable)_[A-Za-z0-9_-]{16,}/g,
  /\bAIza[0-9A-Za-z_-]{30,}/g, // Google
  /\bgsk_[A-Za-z0-9]{20,}/g, // Groq
  /\bnvapi-[A-Za-z0-9_-]{20,}/g, // NVIDIA
  /\bxox[abprs]-[A-Za-z0-9-]{10,}/g, // Slack
  /\b(?:ghp|gho|ghs|ghu|ghr)_[A-Za-z0-9]{30,}|\bgithub_pat_[A-Za-z0-9_]{30,}/g,
  /\bAKIA[0-9A-Z]{16}\b/g, // AWS access key id
  /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g, // JWT
];

/** `Bearer <token>` and `api_key: <value>`-style pairs: the label stays, the value goes. */
// (Values stop at a backslash too: redacting inside JSON text must never eat an escape.)
const PAIRS: RegExp[] = [
  /(\bBearer\s+)[A-Za-z0-9._~+/=-]{12,}/gi,
  /(\b(?:api[_-]?key|x-api-key|apikey|access[_-]?token|secret|password|authorization)\b["']?\s*[:=]\s*["']?)[^\s"',;&})\]\\]{8,}/gi,
];

const registered = new Set<string>();

/** The secret values of an environment: every variable named like a secret, plus `names`. */
export function secretValues(env: Record<string, string | undefined>, names: Iterable<string> = []): string[] {
  const wanted = new Set(names);
  return Object.entries(env)
    .filter(([k, v]) => v && v.trim().length >= MIN_SECRET_LENGTH && (wanted.has(k) || SECRET_NAME.test(k)))
    .map(([, v]) => v!.trim());
}

/** Adds values to redact from now on (the deployment's secrets, at start). */
export function registerSecrets(values: Iterable<string>): void {
  for (const v of values) {
    if (v.length < MIN_SECRET_LENGTH) continue;
    registered.add(v);
    // As it appears inside JSON text (stream events are redacted serialized).
    registered.add(JSON.stringify(v).slice(1, -1));
  }
}

/** The text with every registered secret value and credential-shaped string replaced by {@link REDACTED}. */
export function redact(text: string): string {
  let out = text;
  // Longest first, so a secret that contains another is replaced whole.
  for (const v of [...registered].sort((a, b) => b.length - a.length)) if (out.includes(v)) out = out.split(v).join(REDACTED);
  for (const re of SHAPES) out = out.replace(re, REDACTED);
  for (const re of PAIRS) out = out.replace(re, `$1${REDACTED}`);
  return out;
}

/** An error's message and stack redacted (a copy; the original is left as it is). */
export function redactError(err: unknown): Error {
  const e = err instanceof Error ? err : new Error(String(err));
  const copy = new Error(redact(e.message));
  copy.name = e.name;
  copy.stack = e.stack ? redact(e.stack) : undefined;
  return copy;
}
