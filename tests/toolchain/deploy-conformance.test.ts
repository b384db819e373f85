/**
 * The deploy target conformance kit (`agentcli/testing`) run against the built-in `docker`
 * target: its build context holds the bundle. (tests/toolchain/package.test.ts runs the kit
 * from the installed npm package against a third-party target.)
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { deployTargetConformance } from "../../core/testing/deploy-target.ts";
import docker from "../../plugins/deploy/docker.ts";

const readOrNull = (path: string) => readFile(path).then((b) => new Uint8Array(b), () => null);

deployTargetConformance({
  plugin: docker,
  target: "docker",
  start: async () => ({
    // Any Linux x64 executable stands in for agentcli's here (tests/toolchain/build-executable.test.ts uses the real one).
    env: { AGENTCLI_EXECUTABLE: "/bin/sh" },
    received: (_result, { projectDir }) => readOrNull(join(projectDir, ".agentcli/docker/bundle.tgz")),
    close: async () => {},
  }),
});
