/**
 * `npm run build:explore`: bundles the browser pages' scripts and stylesheets with esbuild — the
 * explorer's (src/explore → build/explore, served at /docs/explore) and the account portal's
 * (src/portal/app → build/portal, served at /portal) — vega, vega-lite and the view code in each
 * script, minified, license comments kept at its end.
 */
import { build } from "esbuild"
import { join, resolve } from "node:path"

const ROOT = resolve(import.meta.dirname, "..")
const started = performance.now()
const pages = [
  ["explorer", "src/explore/app.ts", "src/explore/app.css", "build/explore"],
  ["portal", "src/portal/app/app.ts", "src/portal/app/app.css", "build/portal"]
] as const
for (const [name, script, style, outdir] of pages) {
  const result = await build({
    entryPoints: { app: join(ROOT, script), style: join(ROOT, style) },
    outdir: join(ROOT, outdir),
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
  console.log(`${name} bundled in ${((performance.now() - started) / 1000).toFixed(1)} s`)
}
