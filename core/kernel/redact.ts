/**
 * Secret redaction: the one filter every way out of the process passes through (HTTP response
 * bodies and streams via ../server/http/redact-responses.ts, log lines, webhook bodies, errors that
 * reach a model). Two nets:
 *
 * - every secret value the deployment was given (registered once at start from its
 *   environment), and its recognisable copies: any run of {@link MIN_FRAGMENT_LENGTH}+
 *   characters of it (a key quoted without its `sk-` prefix, a key split in two), its JSON
 *   escaping, its URL encoding, and its base64 (standard and URL-safe) at all three byte
 *   alignments, so a base64 blob that embeds it somewhere is caught too;
 * - anything shaped like a credential (provider key prefixes, bearer tokens, JWTs,
 *   `api_key=...` pairs), registered or not.
 *
 * Registered values are indexed once, at registration, by a rolling hash of every short
 * window of every form; redacting is one pass of that hash over the text (a hit is grown to
 * the whole run of the secret it belongs to) plus one combined RegExp of the shapes and one
 * of the pairs, whatever the number of secrets.
 *
 * @example
 * registerSecrets(secretValues(process.env));
 * redact("401: Incorrect API key provided: sk-abc...xyz"); // "401: Incorrect API key provided: [redacted]"
 */

/** What replaces a secret. */
export const REDACTED = "[redacted]";

/**
 * Variable names whose values are secrets (besides the project's declared ones). `AUTH` only as
 * a word of the name (`BASIC_AUTH`, `PROXY_AUTH`, `OAUTH`) or `AUTHORIZATION`: the origins of
 * `IDENTITY_B_AUTHORIZED_PARTIES`, say, are public, and hid `dev`'s own URL in its banner.
 */
const SECRET_NAME = /(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|PRIVATE|AUTH(?:ORIZATION)?(?![A-Z]))/i;
/** Variable names whose values are public by design (browser-facing keys the chat UI is served). */
const PUBLIC_NAME = /(PUBLISHABLE|PUBLIC)/i;

/** Shorter values are too likely to be ordinary words or numbers to replace everywhere. */
const MIN_SECRET_LENGTH = 8;

/** A run of this many characters of a registered secret (or of one of its encodings) is redacted wherever it appears. */
export const MIN_FRAGMENT_LENGTH = 16;

/** Credential shapes, redacted wherever they appear (one combined RegExp). */
const SHAPES = new RegExp(
  [
    // (Publishable keys, pk_... and sb_publishable_..., are public by design: the chat UI is served them.)
    /\b(?:sk|rk)-(?:[A-Za-z0-9]+-)*[A-Za-z0-9_-]{16,}/, // OpenAI, Anthropic (sk-ant-...), OpenRouter (sk-or-...)
    /\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}/,
    /\bsb_secret_[A-Za-z0-9_-]{16,}/,
    /\bAIza[0-9A-Za-z_-]{30,}/, // Google
    /\bgsk_[A-Za-z0-9]{20,}/, // Groq
    /\bnvapi-[A-Za-z0-9_-]{20,}/, // NVIDIA
    /\bxox[abprs]-[A-Za-z0-9-]{10,}/, // Slack
    /\b(?:ghp|gho|ghs|ghu|ghr)_[A-Za-z0-9]{30,}|\bgithub_pat_[A-Za-z0-9_]{30,}/,
    /\bAKIA[0-9A-Z]{16}\b/, // AWS access key id
    /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/, // JWT
  ].map((r) => r.source).join("|"),
  "g",
);

/** `Bearer <token>` and `api_key: <value>`-style pairs: the label stays, the value goes. */
// (Values stop at a backslash too: redacting inside JSON text must never eat an escape.)
const PAIRS =
  /(\bBearer\s+)[A-Za-z0-9._~+/=-]{12,}|(\b(?:api[_-]?key|x-api-key|apikey|access[_-]?token|secret|password|authorization)\b["']?\s*[:=]\s*["']?)[^\s"',;&})\]\\]{8,}/gi;

const registered = new Set<string>();

/** Rolling-hash window: every form is indexed by each run of this many characters in it. */
const WINDOW = MIN_SECRET_LENGTH;
const BASE = 0x01000193;
const BASE_POW = (() => {
  let p = 1;
  for (let i = 0; i < WINDOW; i++) p = Math.imul(p, BASE);
  return p;
})();
const FILTER_BITS = 1 << 20;

/** Where each window hash occurs: in which form (a secret or one of its encodings), at which offset. */
let windows = new Map<number, Array<{ form: string; at: number }>>();
/** A bit per hash bucket: most text positions are dismissed with one array read. */
let filter = new Uint8Array(0);

/** The password in a URL's credentials (`postgres://user:PASSWORD@host/db`). */
const URL_PASSWORD = /^[a-z][\w+.-]*:\/\/[^:/@\s]*:([^@\s]+)@/i;

/**
 * The secret values of an environment: every variable named like a secret (but not one
 * named publishable or public), plus `names`, plus the password of any URL with credentials (a database or Redis URL).
 */
export function secretValues(env: Record<string, string | undefined>, names: Iterable<string> = []): string[] {
  const wanted = new Set(names);
  const out: string[] = [];
  for (const [k, raw] of Object.entries(env)) {
    const v = raw?.trim() ?? "";
    if (v.length >= MIN_SECRET_LENGTH && (wanted.has(k) || (SECRET_NAME.test(k) && !PUBLIC_NAME.test(k)))) out.push(v);
    const password = URL_PASSWORD.exec(v)?.[1];
    if (password && password.length >= MIN_SECRET_LENGTH) out.push(password, decoded(password));
  }
  return out;
}

function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** Adds values to redact from now on (the deployment's secrets, at start); the index is rebuilt once per call. */
export function registerSecrets(values: Iterable<string>): void {
  let added = false;
  for (const v of values) {
    if (v.length < MIN_SECRET_LENGTH || registered.has(v)) continue;
    registered.add(v);
    added = true;
  }
  if (added) compile();
}

/** The forms a secret leaves the process in: itself, JSON-escaped, URL-encoded, base64 at each alignment. */
function forms(secret: string): string[] {
  const out = new Set([secret, JSON.stringify(secret).slice(1, -1), encodeURIComponent(secret)]);
  const bytes = new TextEncoder().encode(secret);
  for (let align = 0; align < 3; align++) {
    const padded = new Uint8Array(align + bytes.length);
    padded.set(bytes, align);
    const whole = padded.subarray(0, padded.length - (padded.length % 3));
    // The characters that depend on the unknown bytes before the secret are dropped.
    const b64 = btoa(String.fromCharCode(...whole)).slice([0, 2, 3][align]);
    if (b64.length >= MIN_SECRET_LENGTH) {
      out.add(b64);
      out.add(b64.replaceAll("+", "-").replaceAll("/", "_"));
    }
  }
  return [...out];
}

function hashAt(text: string, at: number): number {
  let h = 0;
  for (let i = at; i < at + WINDOW; i++) h = (Math.imul(h, BASE) + text.charCodeAt(i)) | 0;
  return h;
}

function compile(): void {
  windows = new Map();
  filter = new Uint8Array(FILTER_BITS >> 3);
  for (const secret of registered) {
    for (const form of forms(secret)) {
      for (let at = 0; at + WINDOW <= form.length; at++) {
        const h = hashAt(form, at);
        const list = windows.get(h) ?? [];
        list.push({ form, at });
        windows.set(h, list);
        const f = Math.imul(h, 0x9e3779b1) >>> 12;
        filter[f >> 3]! |= 1 << (f & 7);
      }
    }
  }
}

/**
 * The registered secrets' runs replaced. One pass of a rolling hash over the text; a window
 * that occurs in a form is grown both ways along that form, and redacted when the run is the
 * whole form or at least {@link MIN_FRAGMENT_LENGTH} characters of it.
 */
function redactRegistered(text: string): string {
  if (windows.size === 0 || text.length < WINDOW) return text;
  let out = "";
  let done = 0;
  let h = hashAt(text, 0);
  for (let p = 0; p + WINDOW <= text.length;) {
    let best: [number, number] | null = null;
    const f = Math.imul(h, 0x9e3779b1) >>> 12;
    if (filter[f >> 3]! & (1 << (f & 7))) {
      for (const { form, at } of windows.get(h) ?? []) {
        if (text.slice(p, p + WINDOW) !== form.slice(at, at + WINDOW)) continue;
        let l = 0;
        while (at - l > 0 && p - l > done && text.charCodeAt(p - l - 1) === form.charCodeAt(at - l - 1)) l++;
        let r = WINDOW;
        while (at + r < form.length && p + r < text.length && text.charCodeAt(p + r) === form.charCodeAt(at + r)) r++;
        if (r + l < Math.min(MIN_FRAGMENT_LENGTH, form.length)) continue;
        if (!best || p + r - (p - l) > best[1] - best[0]) best = [p - l, p + r];
      }
    }
    if (best) {
      out += text.slice(done, best[0]) + REDACTED;
      done = p = best[1];
      if (p + WINDOW <= text.length) h = hashAt(text, p);
      continue;
    }
    if (p + WINDOW < text.length) {
      h = (Math.imul(h, BASE) - Math.imul(text.charCodeAt(p), BASE_POW) + text.charCodeAt(p + WINDOW)) | 0;
    }
    p++;
  }
  return done === 0 ? text : out + text.slice(done);
}

/** The text with every registered secret (and its fragments and encodings) and credential-shaped string replaced by {@link REDACTED}. */
export function redact(text: string): string {
  return redactRegistered(text).replace(SHAPES, REDACTED).replace(
    PAIRS,
    (_m, bearer: string | undefined, label: string | undefined) => `${bearer ?? label}${REDACTED}`,
  );
}

/** An error's message and stack redacted (a copy; the original is left as it is). */
export function redactError(err: unknown): Error {
  const e = err instanceof Error ? err : new Error(String(err));
  const copy = new Error(redact(e.message));
  copy.name = e.name;
  copy.stack = e.stack ? redact(e.stack) : undefined;
  return copy;
}

/**
 * A stream of text redacted as it passes: a chunk is let through up to its last line break,
 * the rest held until the next chunk (or the end), so a secret split across two chunks is
 * still caught. Server-sent events end every event with a line break, so nothing waits.
 *
 * @example
 * const safe = response.body.pipeThrough(redactingStream());
 */
export function redactingStream(opts: { maxHold?: number } = {}): TransformStream<Uint8Array, Uint8Array> {
  const maxHold = opts.maxHold ?? 64 * 1024;
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let held = "";
  return new TransformStream({
    transform(chunk, controller) {
      const text = held + decoder.decode(chunk, { stream: true });
      let cut = text.lastIndexOf("\n") + 1;
      // A very long line is let through in part, cut at a space when there is one (a secret has none).
      if (text.length - cut > maxHold) {
        const space = text.lastIndexOf(" ", text.length - 1024);
        cut = space > cut ? space + 1 : text.length - 1024;
      }
      held = text.slice(cut);
      if (cut > 0) controller.enqueue(encoder.encode(redact(text.slice(0, cut))));
    },
    flush(controller) {
      const rest = held + decoder.decode();
      held = "";
      if (rest) controller.enqueue(encoder.encode(redact(rest)));
    },
  });
}
