/**
 * `npm run bench:peer -- [patients…] [--data <folder> [--files <folder>]] [--rounds 3] [--threads 2] [--baseline=<checkout>]`: the README's
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
 * `--baseline=<folder of a built checkout>`: that checkout's service, on the same data folder and
 * account with a snapshot of its own (each side's kept aside while the other runs, so ten million
 * patients need no second copy of the database), is asked the same questions in each round beside
 * this one's, the two in turn (the order swapped every round), and must give the same answers; the
 * table adds its cold and warm medians, so a change is compared with the code before it in one run.
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
import { clinicalStatements, duckAnswer, type Question, QUESTIONS } from "./peerSql.ts"
import { spawnService, stopService, withSnapshotOf } from "./serviceProcess.ts"

const ROOT = resolve(import.meta.dirname, "..")

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

/** `root`'s service process on `dataDir`, ready; with a way to wait for a log line. */
const startService = async (root: string, dataDir: string, threads: number) => {
  const heard = new Set<string>()
  let loadedFrom: string | undefined
  const { child, port } = await spawnService(root, { HCC_DATA_DIR: dataDir, HCC_THREADS: String(threads) }, (line) => {
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

/** An answer as text, without the one field that differs between two servers' answers to one question. */
const comparable = (answer: Record<string, unknown>) => JSON.stringify({ ...answer, request_id: undefined })

/** Starts `root`'s service once so that `dataDir` has the snapshot the rounds start from. */
const writeSnapshot = async (root: string, dataDir: string, threads: number) => {
  const s = await startService(root, dataDir, threads)
  // A reused data folder may have its snapshot already (a start from it writes none).
  if (s.loadedFrom() !== "snapshot") await s.until("dataset snapshot written")
  await s.stop()
}

/** Cold and warm times (ms) of each round. */
interface Timings {
  readonly cold: Array<number>
  readonly warm: Array<number>
}

/**
 * One round of one checkout's service: started from its snapshot, each question asked once cold
 * and five times warm. Resolves with the first answers, the clinical `sql_like` statements and the
 * dataset's as_of.
 */
const serviceRound = async (root: string, dataDir: string, threads: number, token: string, timings: ReadonlyMap<Question, Timings>) => {
  const service = await startService(root, dataDir, threads)
  try {
    // The process's first requests (the HTTP path's own warm-up) are not the questions'.
    for (let i = 0; i < 20; i++) await (await fetch(`${service.base}/v1/catalog`, { headers: { authorization: `Bearer ${token}` } })).arrayBuffer()
    const answers = new Map<Question, Record<string, unknown>>()
    for (const [q, t] of timings) {
      const { path, body } = QUESTIONS[q]
      const first = await ask(service.base, token, path, body)
      t.cold.push(first.ms)
      const warm: Array<number> = []
      for (let i = 0; i < 5; i++) warm.push((await ask(service.base, token, path, body)).ms)
      t.warm.push(median(warm))
      answers.set(q, first.json)
    }
    const sqlLike = await ask(service.base, token, QUESTIONS.clinical.path, { ...QUESTIONS.clinical.body, response_format: "sql_like" })
    const clinicalSql = clinicalStatements(sqlLike.json["reasoning_chain"] as ReadonlyArray<string>)
    const asOf = ((await (await fetch(`${service.base}/v1/catalog`, { headers: { authorization: `Bearer ${token}` } })).json()) as { dataset: { as_of: string } }).dataset.as_of
    return { answers, clinicalSql, asOf }
  } finally {
    await service.stop()
  }
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

export interface PeerRow {
  readonly patients: number
  readonly question: Question
  readonly service: Timings
  /** The `--baseline` checkout's service, when there is one. */
  readonly baseline?: Timings | undefined
  readonly duckdb: Timings
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
  options: { readonly rounds: number; readonly threads: number; readonly dataDir?: string | undefined; readonly filesDir?: string | undefined; readonly baseline?: string | undefined }
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
      // A first start loads from SQL and writes the snapshot the rounds start from; the baseline
      // checkout writes its own.
      await withSnapshotOf(dataDir, "this", () => writeSnapshot(ROOT, dataDir, options.threads))
      if (options.baseline !== undefined) await withSnapshotOf(dataDir, "baseline", () => writeSnapshot(options.baseline!, dataDir, options.threads))
      const names = Object.keys(QUESTIONS) as Array<Question>
      const timings = () => new Map(names.map((q) => [q, { cold: [] as Array<number>, warm: [] as Array<number> }]))
      const ours = timings()
      const theirs = timings()
      const duck = timings()
      const checked = new Map<Question, string>()
      for (let round = 0; round < options.rounds; round++) {
        const runOurs = () => withSnapshotOf(dataDir, "this", () => serviceRound(ROOT, dataDir, options.threads, token, ours))
        let mine: Awaited<ReturnType<typeof runOurs>>
        if (options.baseline === undefined) mine = await runOurs()
        else {
          const runTheirs = () => withSnapshotOf(dataDir, "baseline", () => serviceRound(options.baseline!, dataDir, options.threads, token, theirs))
          // In turn, the order swapped every round, so a drift of the machine's speed falls on both.
          let other: typeof mine
          if (round % 2 === 0) {
            mine = await runOurs()
            other = await runTheirs()
          } else {
            other = await runTheirs()
            mine = await runOurs()
          }
          for (const q of names) {
            const [x, y] = [comparable(mine.answers.get(q)!), comparable(other.answers.get(q)!)]
            if (x !== y) throw new Error(`${patients} patients, ${q}: the baseline's answer differs from this checkout's:\n${y.slice(0, 400)}\n${x.slice(0, 400)}`)
          }
        }
        const { answers, clinicalSql, asOf } = mine
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
            duck.get(q)!.cold.push(first.ms)
            checked.set(q, first.what)
            const warm: Array<number> = []
            for (let i = 0; i < 5; i++) warm.push((await timed()).ms)
            duck.get(q)!.warm.push(median(warm))
          }
        } finally {
          db.closeSync()
          instance.closeSync()
        }
        console.error(`${patients}: round ${round + 1} of ${options.rounds}`)
      }
      for (const q of names) rows.push({ patients, question: q, service: ours.get(q)!, ...(options.baseline === undefined ? {} : { baseline: theirs.get(q)! }), duckdb: duck.get(q)!, checked: checked.get(q)! })
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

export const formatPeerBench = ({ rows, preps }: Awaited<ReturnType<typeof runPeerBench>>, baseline?: string): string =>
  [
    "| patients | generate s | export CSV s | CSV MiB | to Parquet s (DuckDB) | Parquet MiB |",
    "|---|---|---|---|---|---|",
    ...preps.map((p) =>
      `| ${p.patients.toLocaleString("en-US")} | ${p.generateSeconds?.toFixed(1) ?? "–"} | ${seconds(p.exportSeconds)} | ${p.csvMiB || "–"} | ${seconds(p.parquetSeconds)} | ${p.parquetMiB} |`
    ),
    "",
    "Medians over the rounds (ms); DuckDB ÷ service: how many times longer DuckDB takes.",
    "",
    ...(baseline === undefined ? [] : [`Baseline: the checkout at ${baseline}, in the same rounds; baseline ÷ service: how many times longer it takes.`, ""]),
    `| patients | question | service cold |${baseline === undefined ? "" : " baseline cold | baseline ÷ service |"} DuckDB cold | DuckDB ÷ service | service warm |${baseline === undefined ? "" : " baseline warm | baseline ÷ service |"} DuckDB warm | DuckDB ÷ service | checked equal |`,
    `|---|---|---|${baseline === undefined ? "" : "---|---|"}---|---|---|${baseline === undefined ? "" : "---|---|"}---|---|---|`,
    ...rows.map((r) => {
      const [sc, dc, sw, dw] = [r.service.cold, r.duckdb.cold, r.service.warm, r.duckdb.warm].map(median) as [number, number, number, number]
      const beside = (times: ReadonlyArray<number> | undefined, ours: number) => (times === undefined ? "" : ` ${ms(median(times))} | ${ratio(median(times), ours)} |`)
      return `| ${r.patients.toLocaleString("en-US")} | ${r.question} | ${ms(sc)} |${beside(r.baseline?.cold, sc)} ${ms(dc)} | ${ratio(dc, sc)} | ${ms(sw)} |${beside(r.baseline?.warm, sw)} ${ms(dw)} | ${ratio(dw, sw)} | ${r.checked} |`
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
  const baselineArg = args.find((a) => a.startsWith("--baseline="))
  if (baselineArg !== undefined) args.splice(args.indexOf(baselineArg), 1)
  const baseline = baselineArg === undefined ? undefined : resolve(baselineArg.slice("--baseline=".length))
  if (baseline !== undefined && !existsSync(join(baseline, "src/main.ts"))) throw new Error(`--baseline=${baseline}: not a checkout of this service (no src/main.ts)`)
  const sizes = args.map(Number).filter((n) => n > 0)
  if ((dataDir !== undefined || filesDir !== undefined) && sizes.length !== 1) throw new Error("--data <folder> and --files <folder> need the one size their dataset has")
  if (filesDir !== undefined && dataDir === undefined) throw new Error("--files <folder> keeps the export of a --data folder: give both")
  const result = await runPeerBench(sizes.length > 0 ? sizes : [50_000, 1_000_000], {
    rounds,
    threads,
    dataDir: dataDir === undefined ? undefined : resolve(dataDir),
    filesDir: filesDir === undefined ? undefined : resolve(filesDir),
    baseline
  })
  console.log(`node ${process.version}; ${availableParallelism()} cores; DuckDB ${threads} threads; ${new Date().toISOString().slice(0, 10)}\n`)
  console.log(formatPeerBench(result, baseline))
}
