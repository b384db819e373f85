/**
 * The error catalogue: the built-in deploy targets (plugins/deploy/: docker, platform). Entries of one area;
 * core/kernel/errors-data.ts lists every area (its `ERRORS`, the order of docs/errors.md). The plugins import
 * them from core/index.ts, the only module of core a plugin imports.
 */
import type { ErrorData } from "../errors-data.ts";

/** The docker target runs from sources: it needs the single executable to put in the image. */
export const DockerNeedsExecutable = {
  name: "DockerNeedsExecutable",
  code: "DEPLOY_FAILED",
  title: "The docker deploy target needs the agentcli single executable.",
  message: "Cannot deploy to docker: agentcli runs from sources here, and the image needs the single executable",
  hint:
    "Run this deploy with the agentcli executable (npm run build writes dist/agentcli), or set AGENTCLI_EXECUTABLE to its path.",
} as const satisfies ErrorData;

/** The executable to put in the image cannot be read. */
export const DockerExecutableUnreadable = {
  name: "DockerExecutableUnreadable",
  code: "DEPLOY_FAILED",
  title: "The executable for the docker image cannot be read.",
  message: (v: { path: string }) => `Cannot deploy to docker: the executable "${v.path}" cannot be read`,
  hint: "Set AGENTCLI_EXECUTABLE to the agentcli single executable (npm run build writes dist/agentcli).",
} as const satisfies ErrorData;

/** The executable is not Linux x64 (the image is linux/amd64). */
export const DockerExecutableNotLinux = {
  name: "DockerExecutableNotLinux",
  code: "DEPLOY_FAILED",
  title: "The executable for the docker image is not a Linux x64 executable.",
  message: (v: { path: string }) => `Cannot deploy to docker: "${v.path}" is not a Linux x64 executable`,
  hint:
    "The image is linux/amd64: use the Linux x64 agentcli executable (npm run build on Linux x64 writes dist/agentcli).",
} as const satisfies ErrorData;

/** The platform target has no PLATFORM_API_KEY. */
export const PlatformKeyMissing = {
  name: "PlatformKeyMissing",
  code: "CREDENTIALS_MISSING",
  title: "The platform deploy target needs PLATFORM_API_KEY.",
  message: "Cannot deploy: PLATFORM_API_KEY is not set",
  hint: 'Add PLATFORM_API_KEY=... to .env (a key from "agentcli platform admin create-key").',
} as const satisfies ErrorData;

/** The control plane does not answer at its address. */
export const PlatformUnreachable = {
  name: "PlatformUnreachable",
  code: "REMOTE_FAILED",
  title: "The control plane cannot be reached.",
  message: (v: { base: string; reason: string }) => `Cannot reach the control plane at "${v.base}": ${v.reason}`,
  hint: 'Start it with "agentcli platform serve", or point AGENTCLI_PLATFORM_URL / --platform-url at it.',
} as const satisfies ErrorData;

/** The control plane refused PLATFORM_API_KEY (HTTP 401). */
export const PlatformKeyRefused = {
  name: "PlatformKeyRefused",
  code: "UNAUTHORIZED",
  title: "The control plane refused PLATFORM_API_KEY.",
  message: (v: { base: string; reason: string }) =>
    `Cannot deploy: the control plane at "${v.base}" refused PLATFORM_API_KEY (${v.reason})`,
  hint: 'Create a key with "agentcli platform admin create-key --tenant <tenant>" and set PLATFORM_API_KEY.',
} as const satisfies ErrorData;

/** The control plane answered a request with an error (the status is its answer's). */
export const PlatformRequestFailed = {
  name: "PlatformRequestFailed",
  code: "DEPLOY_FAILED",
  title: "The control plane answered a deploy's request with an error.",
  message: (v: { method: string; path: string; reason: string }) => `Cannot ${v.method} ${v.path}: ${v.reason}`,
} as const satisfies ErrorData;

/** The bundle's upload failed (the connection, or the upload URL's answer). */
export const BundleUploadFailed = {
  name: "BundleUploadFailed",
  code: "REMOTE_FAILED",
  title: "The bundle cannot be uploaded to the control plane.",
  message: (v: { reason: string }) => `Cannot upload the bundle: ${v.reason}`,
  hint: "Deploy again; if it keeps failing, check the control plane's logs.",
} as const satisfies ErrorData;

/** The deploy was interrupted (Ctrl-C) while it followed the revision. */
export const DeployInterrupted = {
  name: "DeployInterrupted",
  code: "DEPLOY_FAILED",
  title: "The deploy was interrupted while it followed the revision.",
  message: "Cannot follow the deploy: interrupted",
  hint: "The revision keeps going on the control plane; check it there.",
} as const satisfies ErrorData;

/** The new revision ended in a failed state; `logs` is the tail of its logs ("" when none). */
export const RevisionFailed = {
  name: "RevisionFailed",
  code: "DEPLOY_FAILED",
  title: "The deployment's new revision did not go live.",
  message: (v: { name: string; revision: string; status: string; statusMessage: string; logs: string }) =>
    `Cannot deploy "${v.name}": revision ${v.revision} ended ${v.status}${
      v.statusMessage ? `: ${v.statusMessage}` : ""
    }${v.logs ? `\nlogs:\n${v.logs}` : ""}`,
  hint: (v: { status: string }) =>
    v.status === "BUILD_FAILED"
      ? 'Fix the project (run "agentcli deploy --dry-run" to check it) and deploy again.'
      : "The previous revision, if any, keeps serving; fix the cause and deploy again.",
} as const satisfies ErrorData;

/** This area's entries, in the order docs/errors.md lists them. */
export const DEPLOY_ERRORS: readonly ErrorData[] = [
  DockerNeedsExecutable,
  DockerExecutableUnreadable,
  DockerExecutableNotLinux,
  PlatformKeyMissing,
  PlatformUnreachable,
  PlatformKeyRefused,
  PlatformRequestFailed,
  BundleUploadFailed,
  DeployInterrupted,
  RevisionFailed,
];
