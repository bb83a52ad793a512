/**
 * `npm run build:wasm`: AssemblyScript (assembly/) → build/core.wasm, with asconfig.json's release
 * target — unless build/core.wasm is newer than the sources, the configuration and the lockfile
 * (which pins the compiler). `-- --force` compiles regardless.
 */
import { execFileSync } from "node:child_process"
import { join, resolve } from "node:path"
import { isUpToDate } from "./upToDate.ts"

const ROOT = resolve(import.meta.dirname, "..")
const OUTPUT = join(ROOT, "build/core.wasm")
const INPUTS = ["assembly", "asconfig.json", "package-lock.json"].map((p) => join(ROOT, p))

if (!process.argv.includes("--force") && isUpToDate(OUTPUT, INPUTS)) console.log("build/core.wasm is up to date")
else execFileSync(process.execPath, [join(ROOT, "node_modules/assemblyscript/bin/asc.js"), "--config", "asconfig.json", "--target", "release"], { cwd: ROOT, stdio: "inherit" })
