/**
 * A `data generate` or `data import` stopped by a signal while it writes the new dataset empties
 * the set of tables it was filling before it exits: afterwards the spare set holds no row, its
 * tables, indexes and foreign keys are as before, the dataset served is unchanged, the message
 * says so, and the next write succeeds. On both engines. The signal is sent when a progress line
 * shows the write under way (each line is printed after its rows are committed), not after a delay.
 */
import { spawn } from "node:child_process"
import { join } from "node:path"
import { beforeAll, describe, expect, it } from "vitest"
import { HEALTH_TABLE_NAMES } from "../../src/health/healthTables.ts"
import { type DbTarget, query } from "../support/db.ts"
import { databaseFor, ENGINES } from "../support/engines.ts"
import { datasetDigest, generatedFhirExport } from "../support/datasets.ts"
import { dbEnv, hcc, ROOT, tempDataDir } from "../support/server.ts"

let bulk: string
beforeAll(() => {
  bulk = generatedFhirExport(6000, 31)
}, 120_000)

/** Runs `hcc <args>` and sends `signal` once a progress line `<label>: writing N%` shows N ≥ `percent`; the exit code and stderr. */
const stopWhileWriting = (target: DbTarget, args: ReadonlyArray<string>, label: string, percent: number, signal: NodeJS.Signals) =>
  new Promise<{ readonly code: number | null; readonly stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, "src/cli.ts"), ...args], { cwd: ROOT, env: dbEnv(target), stdio: ["ignore", "ignore", "pipe"] })
    let err = ""
    let sent = false
    child.stderr!.setEncoding("utf8").on("data", (d: string) => {
      err += d
      const shares = [...err.matchAll(new RegExp(`^${label}: writing +(\\d+)%`, "gm"))].map((m) => Number(m[1]))
      if (!sent && shares.some((p) => p >= percent)) {
        sent = true
        child.kill(signal)
      }
    })
    child.on("exit", (code) => (sent ? resolve({ code, stderr: err }) : reject(new Error(`ended (${String(code)}) before it was stopped:\n${err}`))))
  })

/** The set the views do not read. */
const spareSet = async (target: DbTarget) => ((await query<{ active: string }>(target, "SELECT active FROM dataset_set"))[0]?.active === "a" ? "b" : "a")

/** Rows of each table of the spare set. */
const spareRows = async (target: DbTarget) => {
  const spare = await spareSet(target)
  const rows: Record<string, number> = {}
  for (const t of HEALTH_TABLE_NAMES) rows[t] = Number((await query<{ n: number }>(target, `SELECT COUNT(*) AS n FROM ${t}_${spare}`))[0]?.n)
  return rows
}

/** The spare set's tables and indexes (SQLite: their DDL; PostgreSQL: its indexes and its foreign keys' definitions). */
const spareSchema = async (target: DbTarget) => {
  const spare = await spareSet(target)
  const tables = HEALTH_TABLE_NAMES.map((t) => `${t}_${spare}`)
  const list = tables.map(() => "?").join(", ")
  if (target.databaseUrl === undefined) return query(target, `SELECT type, name, sql FROM sqlite_schema WHERE tbl_name IN (${list}) ORDER BY name`, tables)
  const indexes = await query(target, `SELECT indexdef FROM pg_indexes WHERE tablename IN (${list}) ORDER BY indexname`, tables)
  const keys = await query(target, `SELECT conrelid::regclass::text AS t, pg_get_constraintdef(oid) AS definition FROM pg_constraint
    WHERE contype = 'f' AND conrelid::regclass::text IN (${list}) ORDER BY 1, 2`, tables)
  return { indexes, keys }
}

const EMPTY = Object.fromEntries(HEALTH_TABLE_NAMES.map((t) => [t, 0]))

describe.each(ENGINES)("a dataset write stopped on %s", (engine) => {
  /** A database holding a 300-patient dataset, with the other set filled too (by an earlier one). */
  const served = async () => {
    const target: DbTarget = { dataDir: tempDataDir(), databaseUrl: await databaseFor(engine) }
    hcc(target, ["data", "generate", "--patients", "200", "--seed", "1"])
    hcc(target, ["data", "generate", "--patients", "300", "--seed", "2"])
    return target
  }

  it("data generate, SIGINT past a fifth of its rows: the rows it wrote are removed, the dataset served is unchanged", async () => {
    const target = await served()
    const [before, schema] = [datasetDigest(target), await spareSchema(target)]
    const { code, stderr } = await stopWhileWriting(target, ["data", "generate", "--patients", "20000", "--seed", "3"], "generating 20000 patients", 20, "SIGINT")
    expect(code, stderr).toBe(130)
    expect(stderr).toContain("hcc: stopped by SIGINT before it finished: nothing was written; the dataset in use is unchanged; the rows written to the spare set were removed\n")
    expect(await spareRows(target)).toEqual(EMPTY)
    expect(await spareSchema(target)).toEqual(schema)
    expect(datasetDigest(target)).toBe(before)
    hcc(target, ["data", "generate", "--patients", "500", "--seed", "4"])
    expect((await query<{ n: number }>(target, "SELECT COUNT(*) AS n FROM patients"))[0]?.n).toBe(500)
  }, 180_000)

  it("data import, SIGTERM in its writing phase: the rows it wrote are removed, the dataset served is unchanged", async () => {
    const target = await served()
    const [before, schema] = [datasetDigest(target), await spareSchema(target)]
    const { code, stderr } = await stopWhileWriting(target, ["data", "import", "--format", "fhir", bulk], "importing FHIR", 0, "SIGTERM")
    expect(code, stderr).toBe(143)
    expect(stderr).toContain(
      "hcc: stopped by SIGTERM before it finished: nothing was written; the dataset in use is unchanged; the rows written to the spare set were removed; the import's scratch files were removed\n"
    )
    expect(await spareRows(target)).toEqual(EMPTY)
    expect(await spareSchema(target)).toEqual(schema)
    expect(datasetDigest(target)).toBe(before)
  }, 180_000)
})
