/**
 * The SQL (SQLite, over the dataset's tables of docs/data.md) that produces each number of the
 * evidence, for response_format `sql_like`: run it on an exported or imported dataset and the same
 * numbers come back (scores are held as 32-bit floats in memory, so averages agree to about 1e-6).
 * Codes come from the dataset's vocabularies (snake_case), never from the caller's text.
 */
import { type Axis, firstDayOfMonth, formatDate } from "../../src/plugin/Plugin.ts"
import { type Dataset } from "../../src/plugin/experimental.ts"
import type { Window } from "./evidence.ts"
import type { Understanding } from "./understand.ts"

const quote = (code: string) => `'${code.replaceAll("'", "''")}'`

/** `WITH similar_patients AS (…)`: the patients with a course of every drug (overlapping the data) and every condition. */
export const similarCte = (data: Dataset, u: Understanding): string => {
  const panelStart = formatDate(firstDayOfMonth(data.firstMonth))
  const parts = [
    ...u.drugs.map((d) =>
      `EXISTS (SELECT 1 FROM drug_exposures e WHERE e.patient_id = p.id AND e.drug = ${quote(d)} AND e.start_date <= '${data.asOf}' AND (e.end_date IS NULL OR e.end_date >= '${panelStart}'))`
    ),
    ...u.conditions.map((c) => `EXISTS (SELECT 1 FROM patient_conditions c WHERE c.patient_id = p.id AND c.condition = ${quote(c)})`)
  ]
  return `WITH similar_patients AS (SELECT p.id FROM patients p${parts.length === 0 ? "" : ` WHERE ${parts.join(" AND ")}`})`
}

export const cohortSql = (data: Dataset, u: Understanding): string => `${similarCte(data, u)} SELECT COUNT(*) FROM similar_patients`

export const encountersSql = (data: Dataset, u: Understanding, w: Window): string =>
  `${similarCte(data, u)} SELECT COUNT(*) FROM encounters WHERE patient_id IN (SELECT id FROM similar_patients) AND start_date BETWEEN '${w.firstDay}' AND '${w.lastDay}'`

const scores = (axis: Axis, w: Window) => {
  const v = axis.toLowerCase()
  return `SELECT patient_id, ${v} AS v, CAST(substr(month, 1, 4) AS INTEGER) * 12 + CAST(substr(month, 6, 2) AS INTEGER) AS m FROM axis_scores ` +
    `WHERE month BETWEEN '${w.firstMonth}' AND '${w.lastMonth}' AND ${v} IS NOT NULL AND patient_id IN (SELECT id FROM similar_patients)`
}

/** Patients with ≥ 3 scores and the mean of their least-squares slopes (points per month). */
export const slopeSql = (data: Dataset, u: Understanding, axis: Axis, w: Window): string =>
  `${similarCte(data, u)}, s AS (SELECT patient_id, COUNT(*) AS n, SUM(m) AS sx, SUM(m * m) AS sxx, SUM(v) AS sy, SUM(m * v) AS sxy FROM (${scores(axis, w)}) GROUP BY patient_id HAVING COUNT(*) >= 3) ` +
  `SELECT COUNT(*), AVG((n * sxy - sx * sy) * 1.0 / (n * sxx - sx * sx)) FROM s`

/** The mean over patients of their mean score. */
export const levelSql = (data: Dataset, u: Understanding, axis: Axis, w: Window): string =>
  `${similarCte(data, u)} SELECT AVG(mean) FROM (SELECT AVG(v) AS mean FROM (${scores(axis, w)}) GROUP BY patient_id)`

export const adverseSql = (data: Dataset, u: Understanding, w: Window): string =>
  `${similarCte(data, u)} SELECT drug, event_type, COUNT(DISTINCT patient_id) FROM adverse_events WHERE patient_id IN (SELECT id FROM similar_patients) ` +
  `AND drug IN (${u.drugs.map(quote).join(", ")}) AND date BETWEEN '${w.firstDay}' AND '${w.lastDay}' GROUP BY drug, event_type ORDER BY drug, event_type`

/** The per-patient means the correlations are computed from (the Pearson r itself runs in the WASM core). */
export const meansSql = (data: Dataset, u: Understanding, axes: ReadonlyArray<Axis>, w: Window, everyone: boolean): string =>
  `${similarCte(data, everyone ? { ...u, drugs: [], conditions: [] } : u)} SELECT patient_id, ${axes.map((a) => `AVG(${a.toLowerCase()})`).join(", ")} FROM axis_scores ` +
  `WHERE month BETWEEN '${w.firstMonth}' AND '${w.lastMonth}' AND patient_id IN (SELECT id FROM similar_patients) GROUP BY patient_id`
