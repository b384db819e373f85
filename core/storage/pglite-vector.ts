/**
 * pgvector for the embedded engine: the `vector` extension of `@electric-sql/pglite-pgvector`
 * (a WASM build of pgvector), loaded into every PGlite so `CREATE EXTENSION vector` works
 * there as on a PostgreSQL server that has pgvector (see ./store-index.ts).
 *
 * PGlite reads an extension's bundle from a file under Node. Inside the single executable the
 * bundle is an asset (`vector.tar.gz`), written once to the temporary directory, named by its
 * digest, and checked before it is used.
 *
 * @example
 * const db = await PGlite.create({ extensions: { vector: await pgliteVectorExtension() } });
 */
import type { Extension } from "@electric-sql/pglite";
import { embeddedAsset } from "../kernel/index.ts";

/** The name of the bundle among the executable's assets. */
export const PGLITE_VECTOR_ASSET = "vector.tar.gz";

/** The `vector` extension for `PGlite.create({ extensions })`. */
export async function pgliteVectorExtension(): Promise<Extension> {
  const { vector } = await import("@electric-sql/pglite-pgvector");
  const bundle = embeddedAsset(PGLITE_VECTOR_ASSET);
  if (!bundle) return vector as Extension;
  const bundlePath = await writeBundle(bundle);
  return {
    name: vector.name,
    setup: async (pg, emscriptenOpts) => ({ ...(await vector.setup(pg, emscriptenOpts)), bundlePath }),
  };
}

async function writeBundle(bundle: Uint8Array): Promise<URL> {
  const [{ createHash }, fs, { tmpdir }, { join }, { pathToFileURL }] = await Promise.all([
    import("node:crypto"),
    import("node:fs"),
    import("node:os"),
    import("node:path"),
    import("node:url"),
  ]);
  const digest = createHash("sha256").update(bundle).digest("hex");
  const file = join(tmpdir(), `agentcli-pglite-vector-${digest.slice(0, 16)}.tar.gz`);
  let present = false;
  try {
    // The temporary directory is shared: a file under this name is used only if it is this bundle.
    present = createHash("sha256").update(fs.readFileSync(file)).digest("hex") === digest;
  } catch { /* not written yet */ }
  if (!present) {
    const tmp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, bundle, { mode: 0o644 });
    fs.renameSync(tmp, file);
  }
  return pathToFileURL(file);
}
