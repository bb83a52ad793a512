/** The values of OMOP rows as the importer reads them: dates, integer ids, and what a row's mapping gives. */
import { parseDate } from "../../health/calendar.ts"
import type { Fact, Problem } from "../../pipeline/facts.ts"
import type { OmopRow } from "./tables.ts"

/** What mapping one row gives: facts, a problem, a note (left out, counted), or nothing. */
export type RowResult = ReadonlyArray<Fact> | Problem | string | void

/** A CDM date (`YYYY-MM-DD`, `YYYYMMDD`, or a datetime starting with a date) → day; a Problem when it does not parse. */
export const dayOf = (text: string, column: string): number | Problem | undefined => {
  if (text === "") return undefined
  const m = /^(\d{4})-?(\d{2})-?(\d{2})(?:[ T]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?$/.exec(text)
  const day = m === null ? Number.NaN : parseDate(`${m[1]}-${m[2]}-${m[3]}`)
  return Number.isNaN(day) ? { path: column, reason: `'${text}' is not a date (YYYY-MM-DD)` } : day
}

/** The SQL (DuckDB) of dayOf: the date a text names, NULL when it names none. */
export const DAY_SQL = (text: string): string =>
  // The common `YYYY-MM-DD` by a plain cast (a regular expression per row costs more than the scan).
  `CASE WHEN length(${text}) = 10 AND ${text}[5] = '-' AND ${text}[8] = '-' THEN TRY_CAST(${text} AS DATE)
    WHEN regexp_full_match(${text}, '\\d{4}-?\\d{2}-?\\d{2}([ T]\\d{2}:\\d{2}(:\\d{2}(\\.\\d+)?)?)?') THEN TRY_CAST(regexp_replace(${text}, '^(\\d{4})-?(\\d{2})-?(\\d{2}).*$', '\\1-\\2-\\3') AS DATE) END`

export const isProblem = (x: unknown): x is Problem => typeof x === "object" && x !== null && "reason" in x

/**
 * An integer as the source wrote it, in its plain form: pandas writes an integer column that has an
 * empty cell as floats ("32869.0"), so a whole number with a zero fraction is that integer.
 */
export const integerText = (v: string): string => (v.endsWith(".0") || /\.0+$/.test(v) ? v.replace(/\.0+$/, "") : v)

/** An integer id column (required); "12.0" is 12 (integerText). */
export const idOf = (row: OmopRow, column: string): string | Problem => {
  const v = integerText(row.get(column))
  if (v === "") return { path: column, reason: "is required" }
  return /^-?\d+$/.test(v) ? v : { path: column, reason: `'${row.get(column)}' is not an integer id` }
}

/** An integer column (a concept the rules compare, a key another table names) as its plain integer text ('' when empty). */
export const integerCell = (row: OmopRow, column: string): string => integerText(row.get(column))
