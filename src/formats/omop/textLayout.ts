/**
 * Whether a CSV or TSV file of an OMOP table has a header row, and the columns of one that has
 * none. OHDSI's ETL-CMS ships the CMS synthetic Medicare claims (SynPUF) in CDM 5.2 and 5.3 as
 * text files without a header row, every column in the DDL order of the version (cdmLayouts.ts).
 *
 * A file has no header row when its first line names none of the table's columns (of any CDM
 * version, in any case) and has as many fields as the table has columns in CDM 5.2, 5.3 or 5.4:
 * every line, the first included, is then a row with the columns of that version. Versions of the
 * same count whose orders differ (CONDITION_OCCURRENCE in 5.3 and 5.4) are told apart by the values
 * of the first rows (up to SAMPLE_ROWS, within the file's first 64 KiB):
 *
 * 1. the version under which the most of those rows fit, a row fitting when each value fits its
 *    column's type: an integer column holds an integer, a float column a number, a date or
 *    datetime column a date (`YYYY-MM-DD` or `YYYYMMDD`, a time after it allowed); empty fits all;
 * 2. on a tie, the version that puts the most non-empty values in integer, float, date and
 *    datetime columns (a text column takes anything, so a value a typed column takes is evidence
 *    of that column);
 * 3. on a tie still, the oldest version (headerless files are how the 5.2 and 5.3 ETLs wrote them).
 *
 * A first line that names no column and whose field count no version has is one problem for the
 * file, naming the counts it could have had.
 */
import type { CdmType } from "./cdm54.ts"
import { CDM_LAYOUTS, CDM_VERSIONS, type CdmVersion } from "./cdmLayouts.ts"
import type { OmopTable } from "./cdmTables.ts"

/** The rows sampled to tell versions of one column count apart. */
export const SAMPLE_ROWS = 1000

/** How a text file's fields are named. */
export type TextLayout =
  | { readonly k: "header" }
  | { readonly k: "headerless"; readonly version: CdmVersion; readonly columns: ReadonlyArray<string> }
  | { readonly k: "unreadable"; readonly problem: string }

const DATE = /^\d{4}-?\d{2}-?\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/

/** Whether a non-empty value fits a column's type. */
const FITS: Readonly<Record<CdmType, (v: string) => boolean>> = {
  i: (v) => /^[-+]?\d+$/.test(v),
  f: (v) => /^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/.test(v),
  d: (v) => DATE.test(v),
  t: (v) => DATE.test(v),
  s: () => true
}

const unquoted = (name: string) => name.trim().replace(/^"(.*)"$/, "$1").trim().toLowerCase()

/**
 * The layout of a text file of `table` (see the module comment) from its first records (the first
 * line's fields first); `name` names the file in a problem.
 */
export const textLayoutOf = (table: OmopTable, name: string, records: ReadonlyArray<ReadonlyArray<string>>): TextLayout => {
  const first = records[0]
  // An empty file has no rows, whatever its header.
  if (first === undefined || first.every((f) => f.trim() === "")) return { k: "header" }
  const known = new Set(CDM_VERSIONS.flatMap((v) => CDM_LAYOUTS[v][table].map(([c]) => c)))
  if (first.some((f) => known.has(unquoted(f)))) return { k: "header" }
  const candidates = CDM_VERSIONS
    .filter((v) => CDM_LAYOUTS[v][table].length === first.length)
    // Versions with the same columns are one candidate, named by the oldest.
    .filter((v, i, all) => all.findIndex((w) => CDM_LAYOUTS[w][table].every(([c], k) => CDM_LAYOUTS[v][table][k]![0] === c)) === i)
  if (candidates.length === 0) {
    const counts = CDM_VERSIONS.map((v, i) => `${v} (${CDM_LAYOUTS[v][table].length}${i === 0 ? " columns" : ""})`)
    return {
      k: "unreadable",
      problem: `${name}: no header row (its first line names no ${table.toUpperCase()} column) and ${first.length} field${first.length === 1 ? "" : "s"} on that line; ` +
        `without a header a file holds every column of its table in the DDL order of CDM ${counts.slice(0, -1).join(", ")} or ${counts.at(-1)}`
    }
  }
  const scored = candidates.map((version) => {
    const columns = CDM_LAYOUTS[version][table]
    let rows = 0
    let typed = 0
    for (const record of records.slice(0, SAMPLE_ROWS)) {
      let fits = record.length <= columns.length
      record.forEach((raw, k) => {
        const v = raw.trim()
        const type = columns[k]?.[1]
        if (v === "" || type === undefined) return
        if (!FITS[type](v)) fits = false
        else if (type !== "s") typed++
      })
      if (fits) rows++
    }
    return { version, rows, typed }
  })
  // Candidates are oldest first: a stable sort keeps the oldest of equals first.
  const best = scored.sort((a, b) => b.rows - a.rows || b.typed - a.typed)[0]!
  return { k: "headerless", version: best.version, columns: CDM_LAYOUTS[best.version][table].map(([c]) => c) }
}
