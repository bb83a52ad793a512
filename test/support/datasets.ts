/** Helpers for tests of the health dataset: its tables as the CSV export gives them, a digest of them, the README's sample calls. */
import { parse } from "csv-parse/sync"
import { createHash } from "node:crypto"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { DatabaseSync } from "node:sqlite"
import { DATABASE_FILE } from "../../src/db/Database.ts"
import { HEALTH_TABLES } from "../../src/health/healthTables.ts"
import { call, fixtureDataDir, hcc, ROOT, startServer, type Target, tempDataDir, waitReady } from "./server.ts"

/**
 * The folder `make` fills, made once per test run under `name` in the run's folder (TMPDIR, which
 * every worker shares) and read-only afterwards: the first file to ask makes it in a folder of its
 * own and renames it into place; a file asking at the same moment in another worker makes its own
 * and keeps the one renamed first. For inputs several files read as they are (a generated
 * population, its export), which a test never changes in place.
 */
const madeOnce = (name: string, make: (dir: string) => void): string => {
  const dir = join(tmpdir(), "hcc-made-once", name)
  if (existsSync(dir)) return dir
  mkdirSync(join(tmpdir(), "hcc-made-once"), { recursive: true })
  const own = mkdtempSync(join(tmpdir(), "hcc-made-once", `${name}-`))
  make(own)
  try {
    renameSync(own, dir)
  } catch (e) {
    // Another worker's is in place (a rename onto a folder that is not empty fails).
    rmSync(own, { recursive: true, force: true })
    if (!existsSync(dir)) throw e
  }
  return dir
}

/** The data folder of `hcc data generate --patients <patients> --seed <seed>`, made once per run: read it, never write to it. */
const generatedOnce = (patients: number, seed: number): string =>
  madeOnce(`generated-${patients}-${seed}`, (dir) => void hcc(dir, ["data", "generate", "--patients", String(patients), "--seed", String(seed)]))

/**
 * A new data folder holding what `hcc data generate --patients <patients> --seed <seed>` writes
 * into an empty one: a copy of the run's (the generator is deterministic: the same rows, the same
 * dataset), for a test that needs the population, not the command.
 */
export const generatedDataDir = (patients: number, seed: number): string => fixtureDataDir(generatedOnce(patients, seed))

/**
 * A generated population of `patients` (seed `seed`) exported as FHIR Bulk Data: the folder (made
 * once per run; read it, never write to it). Exported from a copy: a database opened by SQLite
 * gains and loses files beside it (its journal), which a copy made meanwhile would trip on.
 */
export const generatedFhirExport = (patients: number, seed: number): string =>
  join(madeOnce(`fhir-${patients}-${seed}`, (dir) => void hcc(generatedDataDir(patients, seed), ["data", "export", "--format", "fhir", join(dir, "bulk")])), "bulk")

/** Rows of one table, by column name. */
export type Table = ReadonlyArray<Record<string, string>>

/** The dataset of a data folder, as its CSV export: table → rows. */
export const tablesOf = (dataDir: string): Record<string, Table> => {
  const out = join(tempDataDir(), "csv")
  hcc(dataDir, ["data", "export", out])
  return Object.fromEntries(readdirSync(out).map((f) => [f.replace(/\.csv$/, ""), parse(readFileSync(join(out, f), "utf8"), { columns: true }) as Table]))
}

/**
 * SHA-256 of a data folder's whole dataset (to show an import changed nothing): every row of every
 * health table, in a fixed order. An SQLite folder is read in this process (read-only, as another
 * process would see it after its last commit); a PostgreSQL target through `hcc data export`.
 */
export const datasetDigest = (target: Target): string => {
  const h = createHash("sha256")
  if (typeof target === "string" || target.databaseUrl === undefined) {
    const db = new DatabaseSync(join(typeof target === "string" ? target : target.dataDir, DATABASE_FILE), { readOnly: true })
    try {
      for (const table of HEALTH_TABLES) {
        // Rows in the order of all their columns (SQLite sorts them): the same rows give the same text.
        const statement = db.prepare(`SELECT ${table.columns.map((c) => c.name).join(", ")} FROM ${table.name} ORDER BY ${table.columns.map((_, i) => i + 1).join(", ")}`)
        statement.setReturnArrays(true)
        h.update(table.name)
        let text = ""
        for (const row of statement.iterate()) {
          text += JSON.stringify(row) + "\n"
          if (text.length > 1 << 20) {
            h.update(text)
            text = ""
          }
        }
        h.update(text)
      }
    } finally {
      db.close()
    }
    return h.digest("hex")
  }
  const out = join(tempDataDir(), "csv")
  hcc(target, ["data", "export", out])
  for (const f of readdirSync(out).sort()) h.update(f).update(readFileSync(join(out, f)))
  return h.digest("hex")
}

export { readmeCalls } from "../../scripts/readme-calls.ts"

/** The dataset a server started on a data folder serves, as its catalog says. */
export const servedDataset = async (dataDir: string): Promise<Record<string, unknown>> => {
  const server = await startServer({ dataDir })
  try {
    await waitReady(server)
    return ((await (await call(server, "/v1/catalog")).json()) as { dataset: Record<string, unknown> }).dataset
  } finally {
    await server.stop()
  }
}
