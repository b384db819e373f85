/**
 * The error catalogue: Bundles (BUNDLE_INVALID). Entries of one area; core/kernel/errors-data.ts lists every area
 * (its `ERRORS`, the order of docs/errors.md).
 */
import type { ErrorData } from "../errors-data.ts";

/** A bundle archive that is damaged, not a bundle, or unpacks past its bound; `problem` says which. */
export const BundleInvalid = {
  name: "BundleInvalid",
  code: "BUNDLE_INVALID",
  title: "A bundle archive is damaged, not an agentcli bundle, or too large unpacked.",
  message: (v: { source: string; problem: string }) => `Cannot read ${v.source}: ${v.problem}`,
  hint: 'Build a bundle with "agentcli deploy --dry-run" (it writes .agentcli/bundle.tgz).',
} as const satisfies ErrorData;

/** This area's entries, in the order docs/errors.md lists them. */
export const BUNDLE_ERRORS: readonly ErrorData[] = [
  BundleInvalid,
];
