/**
 * A private npm registry for tests, speaking the registry's wire protocol as npm, pnpm and yarn
 * read it: `GET /<name>` (a scoped name as `@scope%2fname` or `@scope/name`) answers the
 * package document (packument), `GET /<name>/-/<file>.tgz` the tarball; every request must
 * carry `Authorization: Bearer <token>`, else 401 (as a private registry answers). Its packages
 * are packed by the test (`tar`, as `npm pack` lays them out: a `package/` folder, gzipped).
 *
 * @example
 * const registry = await startNpmRegistry({ token });
 * const pkg = registry.publish("@acme/greet", "1.0.0", { "index.js": "module.exports = 1;\n" });
 */
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import * as tar from "tar";

/** A published version: its tarball's URL and integrity, as lockfiles record them. */
export interface Published {
  name: string;
  version: string;
  tarball: string;
  integrity: string;
  shasum: string;
}

export interface NpmRegistry {
  url: string;
  /** Every request: its path and whether it carried the token. */
  requests: Array<{ path: string; authorized: boolean }>;
  publish(name: string, version: string, files: Record<string, string>): Published;
  close(): Promise<void>;
}

export async function startNpmRegistry(o: { token: string }): Promise<NpmRegistry> {
  const packuments = new Map<
    string,
    { name: string; "dist-tags": Record<string, string>; versions: Record<string, unknown> }
  >();
  const tarballs = new Map<string, Buffer>();
  const requests: NpmRegistry["requests"] = [];
  const server: Server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? "/", "http://registry").pathname);
    const authorized = req.headers.authorization === `Bearer ${o.token}`;
    requests.push({ path, authorized });
    const send = (status: number, body: unknown, type = "application/json") => {
      res.writeHead(status, { "content-type": type });
      res.end(type === "application/json" ? JSON.stringify(body) : body as Buffer);
    };
    if (req.method !== "GET" && req.method !== "HEAD") return send(405, { error: "method not allowed" });
    if (!authorized) {
      res.setHeader("www-authenticate", 'Bearer realm="acme"');
      return send(401, { error: "authentication required" });
    }
    const tarball = tarballs.get(path);
    if (tarball) return send(200, tarball, "application/octet-stream");
    const doc = packuments.get(path.slice(1));
    return doc ? send(200, doc) : send(404, { error: "not found" });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const work = mkdtempSync(join(tmpdir(), "agentcli-registry-"));

  const publish = (name: string, version: string, files: Record<string, string>): Published => {
    const dir = mkdtempSync(join(work, "pack-"));
    const manifest = { name, version, main: "index.js", license: "MIT" };
    for (const [p, text] of Object.entries({ ...files, "package.json": JSON.stringify(manifest, null, 2) })) {
      mkdirSync(dirname(join(dir, "package", p)), { recursive: true });
      writeFileSync(join(dir, "package", p), text);
    }
    const file = join(dir, "package.tgz");
    tar.create({ gzip: true, file, cwd: dir, sync: true, portable: true, mtime: new Date(0) }, ["package"]);
    const bytes = readFileSync(file);
    const base = name.split("/").pop()!;
    const tarballPath = `/${name}/-/${base}-${version}.tgz`;
    tarballs.set(tarballPath, bytes);
    const published: Published = {
      name,
      version,
      tarball: `${url}${tarballPath}`,
      integrity: `sha512-${createHash("sha512").update(bytes).digest("base64")}`,
      shasum: createHash("sha1").update(bytes).digest("hex"),
    };
    const doc = packuments.get(name) ?? { name, "dist-tags": {}, versions: {} };
    doc["dist-tags"].latest = version;
    doc.versions[version] = {
      ...manifest,
      dist: { tarball: published.tarball, integrity: published.integrity, shasum: published.shasum },
    };
    packuments.set(name, doc);
    return published;
  };

  return {
    url,
    requests,
    publish,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(work, { recursive: true, force: true });
    },
  };
}
