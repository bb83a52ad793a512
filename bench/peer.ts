/**
 * `npm run bench:peer -- [patients…] [--data <folder> [--files <folder>]] [--rounds 3] [--threads 2]`: the README's
 * population, drug-outcomes and clinical questions answered by the service and by DuckDB — what a
 * data scientist would reach for instead — over the same data, side by side in one run.
 *
 * Per size (default 50,000 and 1,000,000; `--data` reuses a generated data folder for one size):
 * the dataset is generated, exported with `hcc data export` (the service's CSV tables) and turned
 * into Parquet by DuckDB once (`--files <folder>` keeps the Parquet files there, and a later run
 * given the same folder reuses them); then, `--rounds` times each, in turn:
 * - the service (`HCC_THREADS` compute threads, default 2) is started from its snapshot and asked
 *   each question: the first answer is **cold** (nothing about the question computed yet), the
 *   median of five repeats **warm** (the answer kept per dataset);
 * - a new in-memory DuckDB instance (as many threads) over the Parquet files answers the same
 *   question in SQL: the first run is cold (a new instance; the files in the OS cache, as the
 *   service's snapshot is), the median of five repeats warm.
 * The two answers are checked equal — cohort sizes exactly, averages to the precision the service
 * publishes — and the bench stops at the first difference.
 *
 * What DuckDB computes per question:
 * - population: the cohort (age at as_of, condition, mean PO over the window ≥ 5.0) and every
 *   quarter's average of every axis — the whole answer but its significance test;
 * - drug-outcomes: the exposed cohort (a course overlapping the data window) and its adverse-event
 *   rate — not the standardized effect or the correlations (the service does more for this one);
 * - clinical: every statement of the service's own `sql_like` answer (similar patients, their
 *   encounters, each axis's level and slopes, adverse events, the per-patient means behind the
 *   correlations), each result checked against the number the service states.
 */
import { DuckDBInstance } from "@duckdb/node-api"
import { spawnSync } from "node:child_process"
import { randomUUID } from "node:crypto"
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs"
import { availableParallelism, tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { contract as clinical } from "../plugins/clinical/contract.ts"
import { contract as drugOutcomes } from "../plugins/drug-outcomes/contract.ts"
import { contract as population } from "../plugins/population/contract.ts"
import { AXES } from "../src/plugin/axes.ts"
import { spawnService, stopService } from "./serviceProcess.ts"

const ROOT = resolve(import.meta.dirname, "..")

/** The README's questions: each domain's documented `sample` example (README.md, "Endpoints"). */
const sampleOf = (c: { readonly path: string; readonly examples?: ReadonlyArray<{ readonly name: string; readonly request: unknown }> | undefined }) => {
  const example = c.examples?.find((e) => e.name === "sample")
  if (example === undefined) throw new Error(`${c.path} has no sample example`)
  return { path: c.path, body: example.request as Record<string, unknown> }
}
export const QUESTIONS = { population: sampleOf(population), "drug-outcomes": sampleOf(drugOutcomes), clinical: sampleOf(clinical) } as const
type Question = keyof typeof QUESTIONS

/** The tables the questions read. */
const TABLES = ["patients", "patient_conditions", "axis_scores", "drug_exposures", "adverse_events", "encounters"] as const

const cli = (dataDir: string, args: ReadonlyArray<string>) => {
  const r = spawnSync(process.execPath, [join(ROOT, "src/cli.ts"), ...args], { cwd: ROOT, env: { ...process.env, HCC_DATA_DIR: dataDir }, encoding: "utf8", maxBuffer: 1 << 26 })
  if (r.status !== 0) throw new Error(`hcc ${args.join(" ")}: ${r.stderr}`)
  return r.stdout
}

/** A long CLI step (generate, export), its progress shown on this terminal as it goes. */
const cliShowing = (dataDir: string, args: ReadonlyArray<string>) => {
  console.error(`hcc ${args.join(" ")}`)
  const r = spawnSync(process.execPath, [join(ROOT, "src/cli.ts"), ...args], { cwd: ROOT, env: { ...process.env, HCC_DATA_DIR: dataDir }, stdio: ["ignore", "ignore", "inherit"] })
  if (r.status !== 0) throw new Error(`hcc ${args.join(" ")} failed (${r.signal ?? r.status}); its messages are above`)
}

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

/** A service process on `dataDir`, ready; with a way to wait for a log line. */
const startService = async (dataDir: string, threads: number) => {
  const heard = new Set<string>()
  let loadedFrom: string | undefined
  const { child, port } = await spawnService(ROOT, { HCC_DATA_DIR: dataDir, HCC_THREADS: String(threads) }, (line) => {
    heard.add(line.msg)
    if (line.msg === "health data loaded") loadedFrom = String(line["from"])
  })
  const base = `http://127.0.0.1:${port}`
  for (;;) {
    const res = await fetch(`${base}/readyz`)
    await res.arrayBuffer()
    if (res.status === 200) break
    await new Promise((r) => setTimeout(r, 50))
  }
  const until = async (msg: string) => {
    while (!heard.has(msg)) await new Promise((r) => setTimeout(r, 100))
  }
  return { base, until, loadedFrom: () => loadedFrom, stop: () => stopService(child) }
}

/** One answer and how long it took (ms). */
const ask = async (base: string, token: string, path: string, body: unknown) => {
  const started = performance.now()
  const res = await fetch(`${base}${path}`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify(body) })
  const json = (await res.json()) as Record<string, unknown>
  const ms = performance.now() - started
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`)
  return { ms, json }
}

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
const clinicalStatements = (chain: ReadonlyArray<string>) =>
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
const duckAnswer = async (db: Connection, q: Question, service: Record<string, unknown>, context: { readonly asOf: string; readonly clinicalSql: ReadonlyArray<{ sql: string; stated: string }> }) => {
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

export interface PeerRow {
  readonly patients: number
  readonly question: Question
  readonly service: { readonly cold: ReadonlyArray<number>; readonly warm: ReadonlyArray<number> }
  readonly duckdb: { readonly cold: ReadonlyArray<number>; readonly warm: ReadonlyArray<number> }
  readonly checked: string
}

export interface PeerPrep {
  readonly patients: number
  readonly generateSeconds: number | undefined
  readonly exportSeconds: number
  readonly parquetSeconds: number
  readonly parquetMiB: number
  readonly csvMiB: number
}

const sizeMiB = (folder: string, ext: string) =>
  Math.round(TABLES.reduce((s, t) => s + (existsSync(join(folder, `${t}.${ext}`)) ? statSync(join(folder, `${t}.${ext}`)).size : 0), 0) / 1_048_576)

/** Runs the comparison at each size (see the module comment). */
export const runPeerBench = async (
  sizes: ReadonlyArray<number>,
  options: { readonly rounds: number; readonly threads: number; readonly dataDir?: string | undefined; readonly filesDir?: string | undefined }
) => {
  const rows: Array<PeerRow> = []
  const preps: Array<PeerPrep> = []
  for (const patients of sizes) {
    const work = mkdtempSync(join(tmpdir(), "hcc-peer-"))
    const dataDir = options.dataDir ?? join(work, "data")
    try {
      let generateSeconds: number | undefined
      if (options.dataDir === undefined) {
        const g0 = performance.now()
        cliShowing(dataDir, ["data", "generate", "--patients", String(patients)])
        generateSeconds = (performance.now() - g0) / 1000
      }
      const files = options.filesDir ?? join(work, "files")
      // A kept folder whose Parquet files are all there is used as it is (the export of ten
      // million patients takes over half an hour).
      const reuseFiles = TABLES.every((t) => existsSync(join(files, `${t}.parquet`)))
      const e0 = performance.now()
      if (!reuseFiles) cliShowing(dataDir, ["data", "export", files])
      const exportSeconds = reuseFiles ? Number.NaN : (performance.now() - e0) / 1000
      const p0 = performance.now()
      let csvBytes = 0
      if (!reuseFiles) {
        const instance = await DuckDBInstance.create(":memory:", { threads: String(options.threads) })
        const db = await instance.connect()
        // Each table's CSV goes once its Parquet is written (at ten million patients the CSV
        // files are several times the size of everything else the bench holds on disk).
        for (const t of TABLES) {
          console.error(`${patients}: ${t} to Parquet`)
          const csv = join(files, `${t}.csv`)
          csvBytes += statSync(csv).size
          await db.run(`COPY (SELECT * FROM read_csv('${csv}', header = true)) TO '${join(files, `${t}.parquet`)}' (FORMAT parquet)`)
          rmSync(csv)
        }
        db.closeSync()
        instance.closeSync()
      }
      const parquetSeconds = reuseFiles ? Number.NaN : (performance.now() - p0) / 1000
      preps.push({ patients, generateSeconds, exportSeconds, parquetSeconds, parquetMiB: sizeMiB(files, "parquet"), csvMiB: Math.round(csvBytes / 1_048_576) })
      console.error(reuseFiles ? `${patients}: Parquet files of ${files} reused` : `${patients}: exported in ${exportSeconds.toFixed(1)} s, Parquet in ${parquetSeconds.toFixed(1)} s`)

      const account = JSON.parse(cli(dataDir, ["accounts", "create", "--name", `peer-${randomUUID().slice(0, 8)}`, "--tier", "unlimited", "--burst-limit", "1000000000", "--json"])) as { id: string }
      const { token } = JSON.parse(cli(dataDir, ["tokens", "issue", "--account", account.id, "--label", "peer", "--json"])) as { token: string }
      // A first start loads from SQL and writes the snapshot the rounds start from.
      {
        const s = await startService(dataDir, options.threads)
        // A reused data folder may have its snapshot already (a start from it writes none).
        if (s.loadedFrom() !== "snapshot") await s.until("dataset snapshot written")
        await s.stop()
      }
      const names = Object.keys(QUESTIONS) as Array<Question>
      const measured = new Map(names.map((q) => [q, { service: { cold: [] as Array<number>, warm: [] as Array<number> }, duckdb: { cold: [] as Array<number>, warm: [] as Array<number> }, checked: "" }]))
      for (let round = 0; round < options.rounds; round++) {
        const service = await startService(dataDir, options.threads)
        // The process's first requests (the HTTP path's own warm-up) are not the questions'.
        for (let i = 0; i < 20; i++) await (await fetch(`${service.base}/v1/catalog`, { headers: { authorization: `Bearer ${token}` } })).arrayBuffer()
        const answers = new Map<Question, Record<string, unknown>>()
        let asOf = ""
        let clinicalSql: Array<{ sql: string; stated: string }> = []
        try {
          for (const q of names) {
            const { path, body } = QUESTIONS[q]
            const first = await ask(service.base, token, path, body)
            measured.get(q)!.service.cold.push(first.ms)
            const warm: Array<number> = []
            for (let i = 0; i < 5; i++) warm.push((await ask(service.base, token, path, body)).ms)
            measured.get(q)!.service.warm.push(median(warm))
            answers.set(q, first.json)
          }
          const sqlLike = await ask(service.base, token, QUESTIONS.clinical.path, { ...QUESTIONS.clinical.body, response_format: "sql_like" })
          clinicalSql = clinicalStatements(sqlLike.json["reasoning_chain"] as ReadonlyArray<string>)
          asOf = ((await (await fetch(`${service.base}/v1/catalog`, { headers: { authorization: `Bearer ${token}` } })).json()) as { dataset: { as_of: string } }).dataset.as_of
        } finally {
          await service.stop()
        }
        const instance = await DuckDBInstance.create(":memory:", { threads: String(options.threads) })
        const db = await instance.connect()
        try {
          for (const t of TABLES) await db.run(`CREATE VIEW ${t} AS SELECT * FROM read_parquet('${join(files, `${t}.parquet`)}')`)
          for (const q of names) {
            const timed = async () => {
              const started = performance.now()
              const r = await duckAnswer(db, q, answers.get(q)!, { asOf, clinicalSql })
              return { ms: performance.now() - started, ...r }
            }
            const first = await timed()
            if (!first.same) throw new Error(`${patients} patients, ${q}: DuckDB's answer (${first.what}) is not the service's: ${JSON.stringify(answers.get(q)).slice(0, 400)}`)
            measured.get(q)!.duckdb.cold.push(first.ms)
            measured.get(q)!.checked = first.what
            const warm: Array<number> = []
            for (let i = 0; i < 5; i++) warm.push((await timed()).ms)
            measured.get(q)!.duckdb.warm.push(median(warm))
          }
        } finally {
          db.closeSync()
          instance.closeSync()
        }
        console.error(`${patients}: round ${round + 1} of ${options.rounds}`)
      }
      for (const [question, m] of measured) rows.push({ patients, question, ...m })
    } finally {
      rmSync(work, { recursive: true, force: true })
    }
  }
  return { rows, preps }
}

const ms = (x: number) => (x >= 100 ? x.toFixed(0) : x.toFixed(1))
const ratio = (duck: number, service: number) => `${(duck / service).toFixed(1)}×`

/** Seconds to one decimal; "–" for a step that was not run (reused files). */
const seconds = (x: number) => (Number.isNaN(x) ? "–" : x.toFixed(1))

export const formatPeerBench = ({ rows, preps }: Awaited<ReturnType<typeof runPeerBench>>): string =>
  [
    "| patients | generate s | export CSV s | CSV MiB | to Parquet s (DuckDB) | Parquet MiB |",
    "|---|---|---|---|---|---|",
    ...preps.map((p) =>
      `| ${p.patients.toLocaleString("en-US")} | ${p.generateSeconds?.toFixed(1) ?? "–"} | ${seconds(p.exportSeconds)} | ${p.csvMiB || "–"} | ${seconds(p.parquetSeconds)} | ${p.parquetMiB} |`
    ),
    "",
    "Medians over the rounds (ms); DuckDB ÷ service: how many times longer DuckDB takes.",
    "",
    "| patients | question | service cold | DuckDB cold | DuckDB ÷ service | service warm | DuckDB warm | DuckDB ÷ service | checked equal |",
    "|---|---|---|---|---|---|---|---|---|",
    ...rows.map((r) => {
      const [sc, dc, sw, dw] = [r.service.cold, r.duckdb.cold, r.service.warm, r.duckdb.warm].map(median) as [number, number, number, number]
      return `| ${r.patients.toLocaleString("en-US")} | ${r.question} | ${ms(sc)} | ${ms(dc)} | ${ratio(dc, sc)} | ${ms(sw)} | ${ms(dw)} | ${ratio(dw, sw)} | ${r.checked} |`
    })
  ].join("\n")

if (import.meta.main) {
  const args = process.argv.slice(2)
  const flag = (name: string) => {
    const i = args.indexOf(name)
    return i >= 0 ? args.splice(i, 2)[1] : undefined
  }
  const rounds = Number(flag("--rounds") ?? 3)
  const threads = Number(flag("--threads") ?? 2)
  const dataDir = flag("--data")
  const filesDir = flag("--files")
  const sizes = args.map(Number).filter((n) => n > 0)
  if ((dataDir !== undefined || filesDir !== undefined) && sizes.length !== 1) throw new Error("--data <folder> and --files <folder> need the one size their dataset has")
  if (filesDir !== undefined && dataDir === undefined) throw new Error("--files <folder> keeps the export of a --data folder: give both")
  const result = await runPeerBench(sizes.length > 0 ? sizes : [50_000, 1_000_000], {
    rounds,
    threads,
    dataDir: dataDir === undefined ? undefined : resolve(dataDir),
    filesDir: filesDir === undefined ? undefined : resolve(filesDir)
  })
  console.log(`node ${process.version}; ${availableParallelism()} cores; DuckDB ${threads} threads; ${new Date().toISOString().slice(0, 10)}\n`)
  console.log(formatPeerBench(result))
}
