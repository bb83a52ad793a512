/**
 * `npm run bench:scale -- [patients…] [--threads 0,1,2] [--seconds 20] [--data <folder>] [--baseline=<checkout>]`: the service at 50,000,
 * 200,000 and 1,000,000 patients (defaults). Per size: generation (or, with `--data`, the dataset
 * of that generated data folder, for one size), then one start that loads the
 * dataset from SQL and writes its snapshot (start to ready, worst /readyz, RSS, the snapshot's
 * write), then one run per compute-thread setting (HCC_THREADS; 0 = the HTTP thread computes), each
 * starting from the snapshot. For each: start to ready, the slowest
 * `/readyz` answer while loading (polled every 10 ms: how long the event loop was held), RSS once
 * ready, cold-question latency p50/p99 per endpoint (one client, every question new to the
 * server), then a full-speed cold mixed workload (population and clinical, every question new; 4
 * clients) with its req/s and `/healthz` p50/p99/max measured meanwhile by a prober process of
 * its own (bench/healthz-prober.ts; the p99 seen from the clients' own process is printed beside
 * it).
 *
 * `--baseline=<folder of a built checkout>`: the same starts and questions are also run by that
 * checkout's server on the same data folder, each run of ours followed by its run (each side
 * starting from a snapshot of its own, kept apart between runs), and the table gives each side
 * its row and ours the ratio of its cold p50s to the baseline's.
 */
import { spawn, spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { type AddressInfo } from "node:net"
import { createServer } from "node:http"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { OUTCOME_TYPES as DRUG_OUTCOMES } from "../plugins/drug-outcomes/schema.ts"
import { codesOf } from "../src/health/vocabulary.ts"
import { type LatencySummary, summary } from "./healthz-prober.ts"
import { type Side, spawnService, stopService, withSnapshotOf } from "./serviceProcess.ts"

const ROOT = resolve(import.meta.dirname, "..")

/** A cold question generator: the i-th question is different from every earlier one (within `distinct`). */
interface Cold {
  readonly path: string
  readonly distinct: number
  readonly body: (i: number) => unknown
}


/** The generators, given the dataset's vocabularies (from the catalog). */
const coldQuestions = (vocab: { readonly drugs: ReadonlyArray<string>; readonly conditions: ReadonlyArray<string> }): Record<string, Cold> => {
  const pairs = vocab.drugs.flatMap((a, i) => vocab.drugs.slice(i + 1).map((b) => [a, b] as const))
  const ranges = ["30_days", "90_days", "6_months", "1_year", "all"]
  return {
    // A different age range each time (3,000 distinct cohorts of most of the population).
    "population (everyone-ish)": {
      path: "/v1/population",
      distinct: 3000,
      body: (i) => ({ cohort_definition: { age_range: `${i % 50}-${120 - (Math.floor(i / 50) % 60)}` }, analysis_type: "trend" })
    },
    // Evidence is kept per (drugs, conditions, axes, window): a new pair, condition and range each time.
    "clinical (new question)": {
      path: "/v1/clinical",
      distinct: pairs.length * vocab.conditions.length * ranges.length,
      body: (i) => {
        const [a, b] = pairs[i % pairs.length]!
        const condition = vocab.conditions[Math.floor(i / pairs.length) % vocab.conditions.length]!.replaceAll("_", " ")
        return { query: `Patient on ${a} and ${b} with ${condition}, NM declining?`, axes: ["PO", "NM", "ER"], time_range: ranges[Math.floor(i / (pairs.length * vocab.conditions.length)) % ranges.length] }
      }
    },
    // Analyses are kept per (drug, outcome type): only drugs × 3 questions are new.
    "drug-outcomes (new drug)": {
      path: "/v1/drug-outcomes",
      distinct: vocab.drugs.length * DRUG_OUTCOMES.length,
      body: (i) => ({ drug: vocab.drugs[i % vocab.drugs.length], outcome_type: DRUG_OUTCOMES[Math.floor(i / vocab.drugs.length) % DRUG_OUTCOMES.length], population_size: "minimum_1" })
    },
    // The risk model scores each profile anew (its fits are per dataset).
    "risk-model (new profile)": {
      path: "/v1/risk-model",
      distinct: 1_000_000,
      body: (i) => ({
        patient_profile: { axes_snapshot: { PO: 1 + (i % 90) / 10, NM: 1 + ((i * 7) % 90) / 10, ER: 1 + ((i * 13) % 90) / 10 }, age_range: "55-64", conditions: [vocab.conditions[i % vocab.conditions.length]] },
        risk_type: (["hospitalization", "readmission", "health_decline"] as const)[i % 3],
        horizon: "90_days"
      })
    },
    // A new series each time.
    "temporal (new series)": {
      path: "/v1/temporal",
      distinct: 1_000_000,
      body: (i) => ({ patient_axes: { PO: Array.from({ length: 12 }, (_, m) => Math.round((8 - m * (0.1 + (i % 40) / 100)) * 100) / 100) } })
    }
  }
}

const rssMiB = (pid: number): number => Math.round(Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? Number.NaN) / 1024)


const cli = (dataDir: string, args: ReadonlyArray<string>) => {
  const r = spawnSync(process.execPath, [join(ROOT, "src/cli.ts"), ...args], { cwd: ROOT, env: { ...process.env, HCC_DATA_DIR: dataDir }, encoding: "utf8" })
  if (r.status !== 0) throw new Error(r.stderr)
  return r.stdout
}

/** How one start went. */
interface StartRow {
  readonly patients: number
  readonly threads: number
  /** Where the dataset came from (the `health data loaded` line): database or snapshot. */
  readonly from: string
  readonly readySeconds: number
  readonly worstReadyzMs: number
  readonly rssMiB: number
}

/** One service run at one size and thread count. */
export interface ScaleRow extends StartRow {
  readonly cold: Record<string, LatencySummary>
  readonly mixed: {
    readonly reqPerSec: number
    readonly errors: number
    /** Probed by a process of its own (bench/healthz-prober.ts), as a health checker would. */
    readonly healthz: LatencySummary
    /** Probed from the load clients' own process: adds that busy process's event-loop delay. */
    readonly healthzInClients: LatencySummary
    /** The server's own event-loop delay meanwhile (its /metrics, ms): what the HTTP thread did, apart from the client's and the scheduler's share of /healthz's time. */
    readonly loopDelay: { readonly p99: number; readonly max: number }
  }
}

/** What the service's log said, of the few lines the bench reads. */
interface Heard {
  loadedFrom?: string
  metricsPort?: number
  snapshot?: { readonly seconds: number; readonly mib: number }
}

const startService = async (dataDir: string, threads: number, root: string) => {
  const heard: Heard = {}
  // Where the dataset came from, the metrics port, the snapshot's write; nothing else is kept.
  const { child, port } = await spawnService(root, { HCC_DATA_DIR: dataDir, HCC_THREADS: String(threads), HCC_METRICS_PORT: "0" }, (line) => {
    if (line.msg === "health data loaded") heard.loadedFrom = String(line["from"])
    else if (line.msg === "metrics listening") heard.metricsPort = Number(line["port"])
    else if (line.msg === "dataset snapshot written") heard.snapshot = line as unknown as { seconds: number; mib: number }
  })
  return { child, port, heard }
}

/**
 * Makes this process's HTTP client warm: the first fetch() of a process loads and compiles the
 * client itself (~0.1 s), which would otherwise count as the server's slowest /readyz.
 */
let clientWarm: Promise<void> | undefined
const warmClient = () =>
  clientWarm ??= (async () => {
    const server = createServer((_req, res) => res.end("ok"))
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r))
    const { port } = server.address() as AddressInfo
    for (let i = 0; i < 20; i++) await (await fetch(`http://127.0.0.1:${port}/`)).arrayBuffer()
    await new Promise((r) => server.close(r))
  })()

/** Runs bench/healthz-prober.ts against `base` for `seconds`, in a process of its own. */
const probeApart = (base: string, seconds: number) =>
  new Promise<LatencySummary>((resolve, reject) => {
    const prober = spawn(process.execPath, [join(ROOT, "bench/healthz-prober.ts"), base, String(seconds)], { stdio: ["ignore", "pipe", "inherit"] })
    let out = ""
    prober.stdout!.setEncoding("utf8").on("data", (d: string) => out += d)
    prober.on("exit", (code) => (code === 0 ? resolve(JSON.parse(out) as LatencySummary) : reject(new Error(`the /healthz prober exited (${code})`))))
  })

/** Polls /readyz every 10 ms until 200: the slowest answer meanwhile. */
const untilReady = async (base: string) => {
  await warmClient()
  let worst = 0
  for (;;) {
    const a = performance.now()
    const res = await fetch(`${base}/readyz`)
    await res.arrayBuffer()
    worst = Math.max(worst, performance.now() - a)
    if (res.status === 200) return worst
    await new Promise((r) => setTimeout(r, 10))
  }
}

const stop = stopService

/** A start that loads from SQL (no snapshot yet) and writes the snapshot. */
export interface LoadRow extends StartRow {
  readonly snapshot: { readonly seconds: number; readonly mib: number } | undefined
}

const loadRun = async (dataDir: string, patients: number, threads: number, root: string): Promise<LoadRow> => {
  const t0 = performance.now()
  const { child, port, heard } = await startService(dataDir, threads, root)
  try {
    const worst = await untilReady(`http://127.0.0.1:${port}`)
    const readySeconds = (performance.now() - t0) / 1000
    await new Promise((r) => setTimeout(r, 500))
    const rss = rssMiB(child.pid!)
    const deadline = performance.now() + 600_000
    // A start that read a snapshot (a reused `--data` folder) writes none.
    while (heard.snapshot === undefined && heard.loadedFrom !== "snapshot" && performance.now() < deadline) await new Promise((r) => setTimeout(r, 100))
    return { patients, threads, from: heard.loadedFrom ?? "?", readySeconds, worstReadyzMs: worst, rssMiB: rss, snapshot: heard.snapshot }
  } finally {
    await stop(child)
  }
}

/** Measures one run. */
const measureRun = async (dataDir: string, patients: number, threads: number, token: string, seconds: number, root: string): Promise<ScaleRow> => {
  const t0 = performance.now()
  const { child, port, heard } = await startService(dataDir, threads, root)
  try {
    const base = `http://127.0.0.1:${port}`
    const worst = await untilReady(base)
    const readySeconds = (performance.now() - t0) / 1000
    await new Promise((r) => setTimeout(r, 500))
    const rss = rssMiB(child.pid!)
    const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" }
    // The generated dataset's codes (the default vocabulary).
    const questions = coldQuestions({ drugs: codesOf("drug"), conditions: codesOf("condition") })
    const ask = async (cold: Cold, i: number) => {
      const started = performance.now()
      const res = await fetch(`${base}${cold.path}`, { method: "POST", headers, body: JSON.stringify(cold.body(i)) })
      await res.arrayBuffer()
      return { ms: performance.now() - started, ok: res.status === 200 }
    }
    // Cold latency, one client; the first questions of each kind (never asked on this server).
    const cold: ScaleRow["cold"] = {}
    let offset = 0
    for (const [name, q] of Object.entries(questions)) {
      const n = Math.min(40, q.distinct)
      const times: Array<number> = []
      for (let i = 0; i < n; i++) times.push((await ask(q, i)).ms)
      cold[name] = summary(times)
      offset = Math.max(offset, n)
    }
    // Full speed: 4 clients, population and clinical questions in turn, each new to the server;
    // /healthz every 10 ms. (drug-outcomes has only drugs × outcome types distinct questions, all
    // asked above: in the mix they would be answers cached on one thread and cold on another.)
    const mix = [questions["population (everyone-ish)"]!, questions["clinical (new question)"]!]
    const until = performance.now() + seconds * 1000
    let next = offset
    let done = 0
    let errors = 0
    const client = async () => {
      while (performance.now() < until) {
        const i = next++
        const r = await ask(mix[i % mix.length]!, Math.floor(i / mix.length) + offset)
        if (r.ok) done++
        else errors++
      }
    }
    const probes: Array<number> = []
    const prober = async () => {
      while (performance.now() < until) {
        const a = performance.now()
        const res = await fetch(`${base}/healthz`)
        await res.arrayBuffer()
        probes.push(performance.now() - a)
        await new Promise((r) => setTimeout(r, 10))
      }
    }
    // The event-loop delay gauges cover the time since the previous scrape: one now, one after.
    const loopDelay = async () => {
      const text = await (await fetch(`http://127.0.0.1:${heard.metricsPort!}/metrics`)).text()
      const read = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, "m").exec(text)?.[1]) * 1000
      return { p99: read("nodejs_eventloop_lag_p99_seconds"), max: read("nodejs_eventloop_lag_max_seconds") }
    }
    await loopDelay()
    const apart = probeApart(base, seconds)
    const began = performance.now()
    await Promise.all([client(), client(), client(), client(), prober()])
    const delay = await loopDelay()
    const reqPerSec = done / ((performance.now() - began) / 1000)
    const healthz = await apart
    return { patients, threads, from: heard.loadedFrom ?? "?", readySeconds, worstReadyzMs: worst, rssMiB: rss, cold, mixed: { reqPerSec, errors, healthz, healthzInClients: summary(probes), loopDelay: delay } }
  } finally {
    await stop(child)
  }
}

export const runScaleBench = async (sizes: ReadonlyArray<number>, threadCounts: ReadonlyArray<number>, seconds: number, baseline?: string, reuse?: string) => {
  const rows: Array<ScaleRow & { generateSeconds: number; side: Side }> = []
  const loads: Array<LoadRow & { side: Side }> = []
  const sides: ReadonlyArray<readonly [Side, string]> = baseline === undefined ? [["this", ROOT]] : [["this", ROOT], ["baseline", baseline]]
  for (const patients of sizes) {
    const dataDir = reuse ?? mkdtempSync(join(tmpdir(), "hcc-scale-"))
    try {
      const g0 = performance.now()
      if (reuse === undefined) cli(dataDir, ["data", "generate", "--patients", String(patients)])
      const generateSeconds = reuse === undefined ? (performance.now() - g0) / 1000 : Number.NaN
      const account = JSON.parse(cli(dataDir, ["accounts", "create", "--name", `bench-${Date.now()}`, "--tier", "unlimited", "--burst-limit", "1000000000", "--json"])) as { id: string }
      const { token } = JSON.parse(cli(dataDir, ["tokens", "issue", "--account", account.id, "--label", "bench", "--json"])) as { token: string }
      for (const [side, root] of sides) {
        loads.push({ ...await withSnapshotOf(dataDir, side, () => loadRun(dataDir, patients, threadCounts[0]!, root)), side })
        console.error(`loaded ${patients} patients from the database (${side})`)
      }
      for (const threads of threadCounts) {
        for (const [side, root] of sides) {
          const row = await withSnapshotOf(dataDir, side, () => measureRun(dataDir, patients, threads, token, seconds, root))
          rows.push({ ...row, generateSeconds, side })
          console.error(`measured ${patients} patients, ${threads} threads (${side})`)
        }
      }
    } finally {
      if (reuse === undefined) rmSync(dataDir, { recursive: true, force: true })
    }
  }
  return { rows, loads }
}

const ms = (x: number) => (Number.isFinite(x) ? (x >= 100 ? x.toFixed(0) : x.toFixed(1)) : "–")

export const formatScaleBench = ({ rows, loads }: Awaited<ReturnType<typeof runScaleBench>>): string => {
  const endpoints = Object.keys(rows[0]?.cold ?? {})
  const sided = rows.some((r) => r.side === "baseline")
  const side = (s: Side) => (sided ? ` ${s} |` : "")
  const sideHead = sided ? " side |" : ""
  const sideRule = sided ? "---|" : ""
  const loadLines = [
    "First start, from the database (then the snapshot is written, in the background):",
    "",
    `| patients |${sideHead} threads | from | start → ready s | worst /readyz ms | RSS ready MiB | snapshot written s | snapshot MiB |`,
    `|---|${sideRule}---|---|---|---|---|---|---|`,
    ...loads.map((l) =>
      `| ${l.patients.toLocaleString("en-US")} |${side(l.side)} ${l.threads} | ${l.from} | ${l.readySeconds.toFixed(1)} | ${ms(l.worstReadyzMs)} | ${l.rssMiB} | ${l.snapshot?.seconds.toFixed(1) ?? "–"} | ${l.snapshot?.mib ?? "–"} |`
    ),
    "",
    "Then one start per thread count (from the snapshot):",
    ""
  ]
  const lines = [
    ...loadLines,
    `| patients |${sideHead} threads | from | generate s | start → ready s | worst /readyz ms | RSS ready MiB | ` + endpoints.map((e) => `${e} p50 / p99 ms`).join(" | ") +
    " | cold mix req/s | /healthz p50 / p99 / max ms under it (a prober of its own) | /healthz p99 from the clients' process | server's event-loop lag p99 / max ms under it |",
    `|---|${sideRule}---|---|---|---|---|---|` + endpoints.map(() => "---|").join("") + "---|---|---|---|"
  ]
  for (const r of rows) {
    lines.push(
      `| ${r.patients.toLocaleString("en-US")} |${side(r.side)} ${r.threads} | ${r.from} | ${Number.isNaN(r.generateSeconds) ? "–" : r.generateSeconds.toFixed(1)} | ${r.readySeconds.toFixed(1)} | ${ms(r.worstReadyzMs)} | ${r.rssMiB} | ` +
        endpoints.map((e) => `${ms(r.cold[e]!.p50)} / ${ms(r.cold[e]!.p99)}`).join(" | ") +
        ` | ${r.mixed.reqPerSec.toFixed(1)}${r.mixed.errors > 0 ? ` (${r.mixed.errors} errors)` : ""} | ${ms(r.mixed.healthz.p50)} / ${ms(r.mixed.healthz.p99)} / ${ms(r.mixed.healthz.max)} | ${ms(r.mixed.healthzInClients.p99)} | ${ms(r.mixed.loopDelay.p99)} / ${ms(r.mixed.loopDelay.max)} |`
    )
  }
  if (sided) {
    lines.push("", `| patients | threads | RSS this ÷ baseline | start this ÷ baseline | ` + endpoints.map((e) => `${e} cold p50 this ÷ baseline`).join(" | ") + " |", "|---|---|---|---|" + endpoints.map(() => "---|").join(""))
    for (const r of rows) {
      const b = rows.find((x) => x.side === "baseline" && x.patients === r.patients && x.threads === r.threads)
      if (r.side !== "this" || b === undefined) continue
      lines.push(`| ${r.patients.toLocaleString("en-US")} | ${r.threads} | ${(r.rssMiB / b.rssMiB).toFixed(2)} | ${(r.readySeconds / b.readySeconds).toFixed(2)} | ` + endpoints.map((e) => (r.cold[e]!.p50 / b.cold[e]!.p50).toFixed(2)).join(" | ") + " |")
    }
  }
  return lines.join("\n")
}

if (import.meta.main) {
  const args = process.argv.slice(2)
  const flag = (name: string) => {
    const i = args.indexOf(name)
    return i >= 0 ? args.splice(i, 2)[1] : undefined
  }
  const threadCounts = (flag("--threads") ?? "0,1,2").split(",").map(Number)
  const seconds = Number(flag("--seconds") ?? 20)
  const reuse = flag("--data")
  const baselineArg = args.find((a) => a.startsWith("--baseline="))
  const baseline = baselineArg === undefined ? undefined : resolve(baselineArg.slice("--baseline=".length))
  const sizes = args.filter((a) => !a.startsWith("--")).map(Number).filter((n) => n > 0)
  if (reuse !== undefined && sizes.length !== 1) throw new Error("--data <folder> needs the one size its dataset has")
  const result = await runScaleBench(sizes.length > 0 ? sizes : [50_000, 200_000, 1_000_000], threadCounts, seconds, baseline, reuse === undefined ? undefined : resolve(reuse))
  console.log(`node ${process.version}; ${(await import("node:os")).availableParallelism()} cores; ${new Date().toISOString().slice(0, 10)}\n`)
  console.log(formatScaleBench(result))
}
