/**
 * bench:peer's DuckDB side: the README's questions in SQL over the exported tables, and the check
 * that DuckDB's numbers are the ones the service states (see bench/peer.ts for what each question
 * computes in SQL and what it leaves out).
 */
import type { DuckDBInstance } from "@duckdb/node-api"
import { contract as clinical } from "../plugins/clinical/contract.ts"
import { contract as drugOutcomes } from "../plugins/drug-outcomes/contract.ts"
import { contract as population } from "../plugins/population/contract.ts"
import { AXES } from "../src/plugin/axes.ts"

/** The README's questions: each domain's documented `sample` example (README.md, "Endpoints"). */
const sampleOf = (c: { readonly path: string; readonly examples?: ReadonlyArray<{ readonly name: string; readonly request: unknown }> | undefined }) => {
  const example = c.examples?.find((e) => e.name === "sample")
  if (example === undefined) throw new Error(`${c.path} has no sample example`)
  return { path: c.path, body: example.request as Record<string, unknown> }
}
export const QUESTIONS = { population: sampleOf(population), "drug-outcomes": sampleOf(drugOutcomes), clinical: sampleOf(clinical) } as const
export type Question = keyof typeof QUESTIONS

type Row = ReadonlyArray<unknown>
type Connection = Awaited<ReturnType<Awaited<ReturnType<typeof DuckDBInstance.create>>["connect"]>>

const rowsOf = async (db: Connection, sql: string): Promise<ReadonlyArray<Row>> => (await db.runAndReadAll(sql)).getRowsJS()
const num = (v: unknown) => (v === null ? Number.NaN : Number(v))

/** The population question in SQL: the cohort's size and each quarter's average of each axis. */
const populationSql = (asOfYear: number) => {
  const cohort = `SELECT p.id FROM patients p WHERE p.birth_year BETWEEN ${asOfYear - 65} AND ${asOfYear - 45} ` +
    `AND p.id IN (SELECT patient_id FROM patient_conditions WHERE condition = 'type_2_diabetes') ` +
    // The service compares score means with a tolerance of 1e-6 points (docs/analytics.md).
    `AND p.id IN (SELECT patient_id FROM axis_scores WHERE po IS NOT NULL GROUP BY patient_id HAVING AVG(po) >= 5.0 - 1e-6)`
  return {
    size: `SELECT COUNT(*) FROM (${cohort})`,
    quarters: `SELECT CAST(substr(month, 1, 4) AS INTEGER) AS y, (CAST(substr(month, 6, 2) AS INTEGER) + 2) // 3 AS q, ` +
      AXES.map((a) => `AVG(${a.toLowerCase()})`).join(", ") +
      ` FROM axis_scores WHERE patient_id IN (${cohort}) GROUP BY y, q ORDER BY y, q`
  }
}

/** The drug-outcomes question in SQL: the exposed cohort and its adverse-event rate over the data window. */
const drugSql = (asOf: string) => {
  const window = `(SELECT MIN(month) || '-01' AS first_day FROM axis_scores)`
  const exposed = `SELECT DISTINCT patient_id FROM drug_exposures, ${window} w WHERE drug = 'metformin' AND start_date <= DATE '${asOf}' AND (end_date IS NULL OR end_date >= CAST(w.first_day AS DATE))`
  return `SELECT (SELECT COUNT(*) FROM (${exposed})), (SELECT COUNT(*) FROM adverse_events, ${window} w WHERE drug = 'metformin' AND date BETWEEN CAST(w.first_day AS DATE) AND DATE '${asOf}' AND patient_id IN (${exposed}))`
}

/** The data statements of a `sql_like` clinical answer with the result it states. */
export const clinicalStatements = (chain: ReadonlyArray<string>) =>
  chain.flatMap((step) => step.split("\n")).flatMap((line) => {
    const m = /^(WITH .*); -- (?:Pearson r of each column pair \(WASM correlationMatrix\) )?→ (.*)$/.exec(line)
    return m === null ? [] : [{ sql: m[1]!, stated: m[2]! }]
  })

/** Whether DuckDB's rows give the number(s) a clinical statement states. */
const clinicalAgrees = (rows: ReadonlyArray<Row>, stated: string): boolean => {
  const numbers = [...stated.matchAll(/-?\d[\d,]*(?:\.\d+)?/g)].map((m) => Number(m[0].replaceAll(",", "")))
  if (/^\(/.test(stated) || stated === "no rows") {
    // Adverse events: (drug, event, patients) …, in the query's drug order; a count under the
    // minimum cell size is stated as "fewer than k".
    const want = new Map([...stated.matchAll(/\((\w+), (\w+), (\d+|fewer than (\d+))\)/g)].map((m) => [`${m[1]} ${m[2]}`, m[4] === undefined ? Number(m[3]) : -Number(m[4])]))
    return rows.length === want.size && rows.every((r) => {
      const n = want.get(`${r[0]} ${r[1]}`)
      const got = num(r[2])
      return n !== undefined && (n >= 0 ? got === n : got >= 1 && got < -n)
    })
  }
  if (/^[A-Z]{2}_[A-Z]{2} /.test(stated)) return rows.length > 0 // per-patient means: the r is computed from them in the core
  const got = rows[0]!.map(num)
  if (got.length === 1) {
    const decimals = /\.(\d+)/.exec(stated)?.[1]?.length ?? 0
    return Math.abs(got[0]! - numbers[0]!) <= 0.5 * 10 ** -decimals + 1e-9
  }
  // COUNT, AVG(slope): "n patients with 3 scores, slope"
  const slopeDecimals = /\.(\d+)/.exec(stated)?.[1]?.length ?? 5
  return got[0] === numbers[0] && Math.abs(got[1]! - numbers[1]!) <= 0.5 * 10 ** -slopeDecimals + 1e-9
}

/** DuckDB's answer to a question and whether it is the service's. */
export const duckAnswer = async (db: Connection, q: Question, service: Record<string, unknown>, context: { readonly asOf: string; readonly clinicalSql: ReadonlyArray<{ sql: string; stated: string }> }) => {
  const asOfYear = Number(context.asOf.slice(0, 4))
  if (q === "population") {
    const s = populationSql(asOfYear)
    const size = num((await rowsOf(db, s.size))[0]![0])
    const quarters = await rowsOf(db, s.quarters)
    const periods = service["periods"] as ReadonlyArray<Record<string, number | null | string>>
    const same = size === service["cohort_size"] && quarters.length === periods.length && quarters.every((r, i) =>
      periods[i]!["quarter"] === `Q${num(r[1])}_${num(r[0])}` &&
      AXES.every((a, k) => Math.abs(num(r[k + 2]) - Number(periods[i]![`avg_${a}`])) <= 0.0005 + 1e-6))
    return { same, what: `cohort ${size}, ${quarters.length} quarters × ${AXES.length} averages` }
  }
  if (q === "drug-outcomes") {
    const [cohort, events] = (await rowsOf(db, drugSql(context.asOf)))[0]!.map(num)
    const rate = events! / cohort!
    const same = cohort === service["cohort_size"] && Math.abs(rate - Number(service["adverse_event_rate"])) <= 0.00005 + 1e-9
    return { same, what: `cohort ${cohort}, adverse-event rate ${rate.toFixed(4)}` }
  }
  const differing: Array<string> = []
  for (const s of context.clinicalSql) {
    const rows = await rowsOf(db, s.sql)
    if (!clinicalAgrees(rows, s.stated)) differing.push(`${s.sql.slice(-160)} → ${JSON.stringify(rows.slice(0, 3), (_, v) => (typeof v === "bigint" ? Number(v) : v))}, stated ${s.stated}`)
  }
  return { same: context.clinicalSql.length > 0 && differing.length === 0, what: differing.length === 0 ? `${context.clinicalSql.length} statements` : differing.join("; ") }
}
