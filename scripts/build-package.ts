/**
 * The emit step of the installable package (`npm pack` runs it as `prepack`): compiles src/ and
 * plugins/ to JavaScript with declarations in dist/ (tsconfig.package.json), and puts beside them
 * what the compiled code reads at run time — the WASM core (dist/build/core.wasm) and the guides
 * (dist/docs/*.md). The service itself keeps running from the TypeScript sources.
 */
import { execFileSync } from "node:child_process"
import { cpSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"
import pkg from "../package.json" with { type: "json" }

const ROOT = resolve(import.meta.dirname, "..")
const DIST = join(ROOT, "dist")

rmSync(DIST, { recursive: true, force: true })
// The WASM core as the sources now say (build-wasm.ts compiles only when they changed since it was built).
execFileSync(process.execPath, [join(ROOT, "scripts/build-wasm.ts")], { cwd: ROOT, stdio: "inherit" })
execFileSync(process.execPath, [join(ROOT, "node_modules/typescript/bin/tsc"), "-p", join(ROOT, "tsconfig.package.json")], { cwd: ROOT, stdio: "inherit" })
mkdirSync(join(DIST, "build"), { recursive: true })
cpSync(join(ROOT, "build/core.wasm"), join(DIST, "build/core.wasm"))
mkdirSync(join(DIST, "docs"), { recursive: true })
for (const f of readdirSync(join(ROOT, "docs"))) if (f.endsWith(".md")) cpSync(join(ROOT, "docs", f), join(DIST, "docs", f))
// The compiled version.ts reads ../package.json, i.e. this file: the version and ESM, nothing else
// (the package's real package.json is the one beside dist/).
writeFileSync(join(DIST, "package.json"), JSON.stringify({ private: true, type: "module", version: pkg.version }, null, 2) + "\n")
console.error(`dist/ built for ${pkg.name}@${pkg.version}`)
