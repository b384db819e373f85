/**
 * Entry of the single executable: installs the loader for embedded assets (PGlite's WASM,
 * the chat UI), then runs the CLI.
 */
import { setAssetLoader } from "../core/runtime.ts";
import { createRequire } from "node:module";

const require = createRequire(__filename);
const sea = require("node:sea") as { isSea(): boolean; getAsset(name: string): ArrayBuffer };
if (sea.isSea()) {
  setAssetLoader((name) => {
    try {
      return new Uint8Array(sea.getAsset(name));
    } catch {
      return null;
    }
  });
}
void import("./main.ts");
