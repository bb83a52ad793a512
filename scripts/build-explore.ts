/**
 * `npm run build:explore`: bundles the explorer page's script and stylesheet (src/explore) into
 * build/explore with esbuild — vega, vega-lite and the view code in one file, minified, license
 * comments kept at its end — for the service to serve at /docs/explore.
 */
import { build } from "esbuild"
import { join, resolve } from "node:path"

const ROOT = resolve(import.meta.dirname, "..")
const started = performance.now()
const result = await build({
  entryPoints: { app: join(ROOT, "src/explore/app.ts"), style: join(ROOT, "src/explore/app.css") },
  outdir: join(ROOT, "build/explore"),
  bundle: true,
  format: "esm",
  platform: "browser",
  target: ["es2022"],
  minify: true,
  legalComments: "eof",
  metafile: true,
  logLevel: "warning"
})
for (const [file, out] of Object.entries(result.metafile.outputs)) console.log(`${file}: ${(out.bytes / 1024).toFixed(0)} KiB`)
console.log(`explorer bundled in ${((performance.now() - started) / 1000).toFixed(1)} s`)
