/**
 * The control plane's secrets (deployment and revision `secrets` values) are always stored
 * encrypted (AES-GCM, ../../storage/encryption.ts). The key is `AGENTCLI_PLATFORM_SECRETS_KEY`
 * (16, 24 or 32 bytes; replicas sharing one PostgreSQL must share it), or else one generated
 * into the data directory (`secrets.key`, 32 hex characters, owner-only permissions) on first
 * start; to run several replicas, give them that key in the variable. Rotation:
 * move the old key to `AGENTCLI_PLATFORM_SECRETS_PREVIOUS_KEYS` (comma-separated).
 *
 * @example
 * const enc = await platformEncryption("/var/lib/agentcli-platform", process.env);
 * const stored = sealSecrets(enc, [{ name: "API_KEY", value: "sk-..." }]);
 */
import { chmod, readFile, writeFile } from "node:fs/promises";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { AesKeyLength, agentcliError } from "../../kernel/index.ts";
import { AtRestEncryption } from "../../storage/index.ts";

type Secret = { name: string; value: string };

/** The key file's name in the data directory. */
export const SECRETS_KEY_FILE = "secrets.key";

/** The control plane's secrets cipher: from the environment, else the data directory's key (made on first start). */
export async function platformEncryption(
  dataDir: string,
  env: Record<string, string | undefined>,
): Promise<AtRestEncryption> {
  const previous = (env.AGENTCLI_PLATFORM_SECRETS_PREVIOUS_KEYS ?? "").split(",").filter(Boolean).map((k, i) =>
    keyBytes(`AGENTCLI_PLATFORM_SECRETS_PREVIOUS_KEYS (key ${i + 1})`, k)
  );
  const fromEnv = env.AGENTCLI_PLATFORM_SECRETS_KEY;
  if (fromEnv) return new AtRestEncryption([keyBytes("AGENTCLI_PLATFORM_SECRETS_KEY", fromEnv), ...previous]);
  const path = join(dataDir, SECRETS_KEY_FILE);
  let text: string;
  try {
    text = (await readFile(path, "utf8")).trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    // 32 hex characters: a 32-byte key that can also be moved into AGENTCLI_PLATFORM_SECRETS_KEY as is.
    text = randomBytes(16).toString("hex");
    try {
      await writeFile(path, `${text}\n`, { mode: 0o600, flag: "wx" });
    } catch (e) {
      // Another process made it first: use that one.
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      text = (await readFile(path, "utf8")).trim();
    }
  }
  const key = keyBytes(`the secrets key file ${path}`, text);
  await chmod(path, 0o600).catch(() => {});
  return new AtRestEncryption([key, ...previous]);
}

function keyBytes(variable: string, text: string): Uint8Array {
  const bytes = new TextEncoder().encode(text);
  if (![16, 24, 32].includes(bytes.length)) {
    throw agentcliError(AesKeyLength, {
      action: `start the control plane with ${variable}`,
      sizes: "16, 24 or 32 bytes",
      length: bytes.length,
    });
  }
  return bytes;
}

/** Secrets as stored: each non-empty value sealed. */
export function sealSecrets(enc: AtRestEncryption, secrets: readonly Secret[]): Secret[] {
  return secrets.map((s) => ({ name: s.name, value: s.value === "" ? "" : enc.sealText(s.value) }));
}

/** Stored secrets opened (values stored before encryption read as they are). */
export function openSecrets(enc: AtRestEncryption, secrets: readonly Secret[]): Secret[] {
  return secrets.map((s) => ({ name: s.name, value: enc.openText(s.value) }));
}
