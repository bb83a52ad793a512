/** The surveillance series beside an imported dataset, in the service's CSV layout. */
import { Effect } from "effect"
import { existsSync } from "node:fs"
import { join } from "node:path"
import type { Row, Rows } from "../../health/healthTables.ts"
import { tableSpec } from "../../health/healthTables.ts"
import { DuplicateKeys } from "./DuplicateKeys.ts"
import { readWholeTable, type TableContext } from "./tableFile.ts"

/** The surveillance tables, brought beside an imported dataset (FHIR and OMOP hold none). */
export const SURVEILLANCE_TABLES = ["animal_surveillance", "human_surveillance"] as const

/**
 * Reads `animal_surveillance.csv` and `human_surveillance.csv` of a folder when they are there
 * (the layout of docs/data.md), checked against the given species, zoonotic condition and region
 * codes; problems go to `problem` as `file:line: column: reason`. Weekly series: small enough to hold.
 */
export const readSurveillance = (
  folder: string,
  codes: Readonly<Record<"species" | "zoonotic_condition" | "region", ReadonlySet<string>>>,
  problem: (text: string) => void,
  scratch: string
): Effect.Effect<Rows | undefined, Error> =>
  Effect.gen(function*() {
    const present = SURVEILLANCE_TABLES.filter((t) => existsSync(join(folder, `${t}.csv`)))
    if (present.length === 0) return undefined
    let duplicates: DuplicateKeys | undefined
    const ctx: TableContext = {
      problem,
      vocabulary: new Map<string, Set<string>>(Object.entries(codes).map(([k, v]) => [k, new Set(v)])),
      keys: new Map(),
      codesFrom: "the import (docs/data.md, \"Surveillance beside an import\")",
      duplicates: () => (duplicates ??= new DuplicateKeys(scratch))
    }
    const rows: Rows = {}
    for (const name of SURVEILLANCE_TABLES) {
      const list: Array<Row> = []
      if (present.includes(name)) yield* readWholeTable(tableSpec(name), join(folder, `${name}.csv`), `${name}.csv`, ctx, (batch) => Effect.sync(() => list.push(...batch)))
      rows[name] = list
    }
    yield* Effect.sync(() => duplicates?.dispose())
    return rows
  })
