/**
 * Whether a build step's output is up to date with its inputs, as make decides it: the output
 * exists and no input was modified after it. `npm run build` skips what is up to date, so the
 * build `npm test` runs after `npm install` (and the one `npm pack` runs) redoes nothing.
 */
import { existsSync, readdirSync, statSync } from "node:fs"
import { join } from "node:path"

/** The files under `path` (itself, when it is a file), recursively. */
export const filesUnder = (path: string): ReadonlyArray<string> => {
  if (!existsSync(path)) return []
  if (!statSync(path).isDirectory()) return [path]
  return readdirSync(path, { withFileTypes: true }).flatMap((d) => filesUnder(join(path, d.name)))
}

/** True when `output` exists and is at least as new as every file of `inputs` (files or folders). */
export const isUpToDate = (output: string, inputs: ReadonlyArray<string>): boolean => {
  if (!existsSync(output)) return false
  const built = statSync(output).mtimeMs
  return inputs.flatMap(filesUnder).every((file) => statSync(file).mtimeMs <= built)
}
