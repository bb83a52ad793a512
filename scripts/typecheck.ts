/**
 * `npm run typecheck`: `tsc -b` over tsconfig.json (noEmit; its build info in build/), which checks
 * only what changed since the last check and nothing at all when no file of the project did. That
 * decision reads the project's own files: declarations a new install brought (node_modules) are not
 * among them, so a lockfile newer than the last check forces a whole one. `-- --force` always does.
 */
import { execFileSync } from "node:child_process"
import { join, resolve } from "node:path"
import { isUpToDate } from "./upToDate.ts"

const ROOT = resolve(import.meta.dirname, "..")
const BUILD_INFO = join(ROOT, "build/typecheck.tsbuildinfo")

const force = process.argv.includes("--force") || !isUpToDate(BUILD_INFO, [join(ROOT, "package-lock.json")])
try {
  execFileSync(process.execPath, [join(ROOT, "node_modules/typescript/bin/tsc"), "-b", "tsconfig.json", ...(force ? ["--force"] : [])], { cwd: ROOT, stdio: "inherit" })
} catch {
  // tsc has printed the errors.
  process.exitCode = 1
}
