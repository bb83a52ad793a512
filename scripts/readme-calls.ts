/** The README's sample calls: every `-d '{…}'` body of its curl lines, with the path it is sent to. */
import { readFileSync } from "node:fs"
import { join, resolve } from "node:path"

export const readmeCalls = (): ReadonlyArray<readonly [string, unknown]> => {
  const readme = readFileSync(join(resolve(import.meta.dirname, ".."), "README.md"), "utf8")
  const calls: Array<readonly [string, unknown]> = []
  const re = /curl -s localhost:8080(\/v1\/[a-z-]+)[^\n]*\\\n\s*-d '([^']+)'/g
  for (let m = re.exec(readme); m !== null; m = re.exec(readme)) calls.push([m[1]!, JSON.parse(m[2]!)])
  return calls
}
