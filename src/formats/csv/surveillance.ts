/** The surveillance series beside an imported dataset, in the service's CSV layout. */
import * as Effect from "effect/Effect"
import { existsSync, statSync } from "node:fs"
import { dirname, join } from "node:path"
import type { Row, Rows } from "../../health/healthTables.ts"
import { tableSpec } from "../../health/healthTables.ts"
import { DEFAULT_VOCABULARY } from "../../health/vocabulary.ts"
import type { ImportSetup } from "../../pipeline/importCommon.ts"
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

/** The surveillance files (animal_surveillance.csv, human_surveillance.csv) in the folders imported, if any. */
export const surveillanceOf = (paths: ReadonlyArray<string>, setup: ImportSetup): Effect.Effect<Rows | undefined, Error> =>
  Effect.gen(function*() {
    const regions = new Set([...setup.regionCodes, ...setup.staging.roster.regions(), ...[...setup.staging.roster.seeds.keys()].filter((k) => k.startsWith("region|")).map((k) => k.slice(7))])
    for (const path of paths) {
      if (!existsSync(path) || !statSync(path).isDirectory()) continue
      const rows = yield* readSurveillance(path, {
        species: new Set(DEFAULT_VOCABULARY.species.map((e) => e.code)),
        zoonotic_condition: new Set(DEFAULT_VOCABULARY.zoonotic_condition.map((e) => e.code)),
        region: regions
      }, (text) => setup.report.problemText(text), join(dirname(setup.staging.path), `import-${setup.id}-surveillance.staging.db`))
      if (rows !== undefined) return rows
    }
    return undefined
  })
