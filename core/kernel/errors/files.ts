/**
 * The error catalogue: Files (FILE_FAILED). Entries of one area; core/kernel/errors-data.ts lists every area
 * (its `ERRORS`, the order of docs/errors.md).
 */
import type { ErrorData } from "../errors-data.ts";

/** An operating-system error on a path, from `fromSystemError` (core/kernel/errors.ts). */
export const FileFailed = {
  name: "FileFailed",
  code: "FILE_FAILED",
  title: "A file or folder cannot be used: permissions, a full disk, a file where a folder should be.",
  message: (v: { action: string; path: string; reason: string }) => `Cannot ${v.action} "${v.path}": ${v.reason}`,
  hint: "Check the path and its permissions, then run the command again.",
} as const satisfies ErrorData;

/** This area's entries, in the order docs/errors.md lists them. */
export const FILES_ERRORS: readonly ErrorData[] = [
  FileFailed,
];
