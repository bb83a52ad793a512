/**
 * Generates one 30,000-patient dataset (default seed) per test run, shared by the test files that
 * check planted truths: each copies it into its own data folder (`fixtureDataDir`), so servers
 * never share a database.
 */
import { spawnSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import type { TestProject } from "vitest/node"

export const FIXTURE_PATIENTS = 30_000
export const FIXTURE_SEED = 20_240_601

export default function setup(project: TestProject) {
  const dir = mkdtempSync(join(tmpdir(), "hcc-fixture-"))
  const root = resolve(import.meta.dirname, "../..")
  const r = spawnSync(process.execPath, [join(root, "src/cli.ts"), "data", "generate", "--patients", String(FIXTURE_PATIENTS), "--seed", String(FIXTURE_SEED)], {
    cwd: root,
    env: { ...process.env, HCC_DATA_DIR: dir },
    encoding: "utf8"
  })
  if (r.status !== 0) throw new Error(`fixture generation failed: ${r.stderr}`)
  project.provide("fixtureDir", dir)
  return () => rmSync(dir, { recursive: true, force: true })
}

declare module "vitest" {
  export interface ProvidedContext {
    fixtureDir: string
  }
}
