/**
 * `npm run test:quick`'s set-up (vitest.quick.config.ts): the run's folder and the 1,000-patient
 * template its one server starts from; none of the full run's larger datasets, and no PostgreSQL
 * (no file of the quick run needs them).
 */
import { rmSync } from "node:fs"
import type { TestProject } from "vitest/node"
import { defaultTemplate, runFolder } from "./globalSetup.ts"

export default async function setup(project: TestProject) {
  const runDir = runFolder()
  const defaultDir = await defaultTemplate()
  project.provide("defaultDir", defaultDir)
  return () => {
    rmSync(defaultDir, { recursive: true, force: true })
    rmSync(runDir, { recursive: true, force: true })
  }
}
