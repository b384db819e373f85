/**
 * The public face of core/bundle/: what the other layers, bin/ and plugins/ import from it.
 * Written by issue 32's step 1 from the imports of the day; later steps point those imports here.
 * Layer order (docs/architecture.md): kernel -> config, bundle, auth, storage -> harness, engine -> server, platform -> testing -> cli.
 */
export { buildBundle, readBundle } from "./bundle.ts";
export { fitsTar, packTar, TarRefused, TarScanner } from "./tar.ts";
export type { Bundle, BundleManifest } from "./types.ts";
