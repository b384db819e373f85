/**
 * The studio's assets stay small: everything `/studio` loads (index.html, its scripts and
 * stylesheets, built by scripts/build-ui.ts) is under 300 KB gzipped (issue 36).
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { test } from "node:test";
import { buildUi } from "../../scripts/build-ui.ts";

const LIMIT_KB = 300;

test(`the studio loads under ${LIMIT_KB} KB gzipped`, { timeout: 300_000 }, async (t) => {
  const out = mkdtempSync(join(tmpdir(), "agentcli-studio-build-"));
  try {
    const { files } = await buildUi({ outDir: out, quiet: true });
    const studio = files.filter((f) => f.startsWith("studio/") && /\.(html|js|css)$/.test(f));
    assert.ok(studio.includes("studio/index.html"), "the build has the studio");
    let gz = 0;
    for (const f of studio) gz += gzipSync(readFileSync(join(out, f)), { level: 9 }).length;
    const kb = gz / 1024;
    t.diagnostic(`studio assets: ${studio.length} files, ${kb.toFixed(1)} KB gzipped`);
    assert.ok(kb < LIMIT_KB, `the studio's assets are ${kb.toFixed(1)} KB gzipped (limit ${LIMIT_KB} KB)`);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});
