/**
 * Puts a SEA blob into a copy of a platform's Node binary with postject, as Node's
 * single-executable guide does for each format: a Mach-O binary loses its code signature first
 * (the injection would break it), takes the blob in segment `NODE_SEA`, and is signed ad hoc
 * when the build runs on a Mac (`codesign --sign -`; elsewhere it stays unsigned); ELF and PE
 * take it as they are (a PE's Authenticode signature no longer matches, and Windows runs it unsigned).
 *
 * @example
 * injectBlob(TARGETS["darwin-x64"], "dist/agentcli-darwin-x64", "dist/sea-prep-cross.blob");
 */
import { fileURLToPath } from "node:url";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { removeSignature } from "./macho-signature.ts";
import type { Target } from "./build-targets.ts";

const root = fileURLToPath(new URL("..", import.meta.url));

/** The fuse Node checks to know it carries a SEA blob (postject flips it). */
export const SEA_FUSE = "NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2";

/** Injects `blob` into the executable `exe` (a copy of `target`'s Node binary), in place. */
export function injectBlob(target: Target, exe: string, blob: string): void {
  if (target.format === "macho") removeSignature(exe);
  const args = [
    join(root, "node_modules/postject/dist/cli.js"),
    exe,
    "NODE_SEA_BLOB",
    blob,
    "--sentinel-fuse",
    SEA_FUSE,
  ];
  if (target.format === "macho") args.push("--macho-segment-name", "NODE_SEA");
  execFileSync(process.execPath, args, { stdio: "inherit" });
  // On a Mac, the ad-hoc signature an Apple-silicon executable needs to start at all.
  if (target.format === "macho" && process.platform === "darwin") {
    execFileSync("codesign", ["--sign", "-", exe], { stdio: "inherit" });
  }
}
