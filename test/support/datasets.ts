/** Helpers for tests of the health dataset: its tables as the CSV export gives them, a digest of them, the README's sample calls. */
import { parse } from "csv-parse/sync"
import { createHash } from "node:crypto"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { call, hcc, ROOT, startServer, type Target, tempDataDir, waitReady } from "./server.ts"

/** A generated population of `patients` (seed `seed`) exported as FHIR Bulk Data: the folder. */
export const generatedFhirExport = (patients: number, seed: number): string => {
  const source = tempDataDir()
  hcc(source, ["data", "generate", "--patients", String(patients), "--seed", String(seed)])
  const bulk = join(tempDataDir(), "bulk")
  hcc(source, ["data", "export", "--format", "fhir", bulk])
  return bulk
}

/** Rows of one table, by column name. */
export type Table = ReadonlyArray<Record<string, string>>

/** The dataset of a data folder, as its CSV export: table → rows. */
export const tablesOf = (dataDir: string): Record<string, Table> => {
  const out = join(tempDataDir(), "csv")
  hcc(dataDir, ["data", "export", out])
  return Object.fromEntries(readdirSync(out).map((f) => [f.replace(/\.csv$/, ""), parse(readFileSync(join(out, f), "utf8"), { columns: true }) as Table]))
}

/** SHA-256 of a data folder's whole dataset (to show an import changed nothing). */
export const datasetDigest = (target: Target): string => {
  const out = join(tempDataDir(), "csv")
  hcc(target, ["data", "export", out])
  const h = createHash("sha256")
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
