/**
 * `npm run bench:http`: the platform (bearer auth, burst limit, daily reservation, durable ledger,
 * request log) against a bare node:http endpoint doing the same work, side by side in one run.
 * The service uses an Unlimited account whose burst limit does not bind, so the limiter's cost is
 * measured, not its refusals. Prints req/s, latency percentiles, the server process's CPU per
 * request and the ratios: bare and service are measured in turn for several rounds (this machine's
 * speed drifts between minutes; within a round both sides see the same machine), and the table
 * gives the median round and the median of the rounds' ratios, with every round's ratio below it.
 *
 * `runHttpBench` is exported for test harnesses; this file is also the CLI.
 */
import autocannon from "autocannon"
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { type SteadyResult, steadyLoad } from "./steady.ts"
import { benchDir, hcc, startProcess } from "./processes.ts"
import { SERVER_NODE_FLAGS } from "../src/nodeFlags.ts"

const ROOT = resolve(import.meta.dirname, "..")

/** One measured target. */
export interface BenchRow {
  readonly name: string
  readonly reqPerSec: number
  readonly p50: number
  readonly p99: number
  readonly non2xx: number
  readonly errors: number
  /** CPU time of the server process (every thread) per answered request, µs; undefined where /proc is not there to read. */
  readonly cpuMicrosPerRequest?: number | undefined
}

/** Options of a run. */
export interface HttpBenchOptions {
  /** Seconds per target (after a warm-up of a quarter of that). */
  readonly seconds?: number
  /** Concurrent connections. */
  readonly connections?: number
  /** Rounds of bare and service measured in turn (the table gives each target's median round). Default 3. */
  readonly rounds?: number
  /**
   * Another checkout of this service (its root folder, built), measured beside this one in each
   * round on a copy of the same accounts, so a change to the request path is compared before and
   * after in one run.
   */
  readonly baseline?: string | undefined
}

/** A copy of a data folder (the same dataset, accounts and tokens) for another checkout's server, removed when the bench exits. */
const copyForBaseline = (dataDir: string): string => {
  const copy = benchDir("hcc-bench-baseline-")
  cpSync(dataDir, copy, { recursive: true })
  return copy
}

/** CPU seconds (user + system, every thread) a process has used, from /proc; undefined elsewhere. */
const cpuSecondsOf = (pid: number | undefined): number | undefined => {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
    return (Number(fields[11]) + Number(fields[12])) / 100 // utime, stime in clock ticks (USER_HZ = 100 on Linux)
  } catch {
    return undefined
  }
}

/** The median of some numbers (the lower middle of an even count). */
const median = (values: ReadonlyArray<number>): number => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)]!

/** Warm-up (unless `warm: false`), then one measured autocannon run; with `serverPid`, the server's CPU per request too. */
export const measure = async (
  name: string,
  options: Parameters<typeof autocannon>[0],
  seconds: number,
  extra: { readonly warm?: boolean; readonly serverPid?: number | undefined } = {}
): Promise<BenchRow> => {
  if (extra.warm !== false) await autocannon({ ...options, duration: Math.max(1, Math.round(seconds / 4)) }) // warm-up (JIT, caches)
  const cpuBefore = cpuSecondsOf(extra.serverPid)
  const r = await autocannon({ ...options, duration: seconds })
  const cpuAfter = cpuSecondsOf(extra.serverPid)
  const cpuMicrosPerRequest = cpuBefore === undefined || cpuAfter === undefined || r.requests.total === 0 ? undefined : ((cpuAfter - cpuBefore) * 1e6) / r.requests.total
  return { name, reqPerSec: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx, errors: r.errors + r.timeouts, cpuMicrosPerRequest }
}

/**
 * Runs both servers and measures each pair (catalog, charged POST) `rounds` times in turn; returns
 * each side's median round as the rows, and the service-to-bare ratio of every round.
 */
export const runHttpBench = async (options: HttpBenchOptions = {}) => {
  const seconds = options.seconds ?? 10
  const rounds = options.rounds ?? 3
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`runHttpBench: rounds must be a whole number, 1 or more (got ${rounds})`)
  const connections = options.connections ?? 50
  const dataDir = benchDir("hcc-bench-")
  const serviceEnv = (dir: string) => ({
    PORT: "0",
    HOST: "127.0.0.1",
    HCC_DATA_DIR: dir,
    HCC_PLUGINS: "./test/fixtures/plugins/series-stats.ts",
    HCC_LOG_LEVEL: "info",
    // The platform is measured, not the dataset: a small one keeps its background load out of the run.
    HCC_POPULATION: "1000",
    // The request path is measured: no compute threads competing for the two cores.
    HCC_THREADS: "0"
  })
  const service = await startProcess([join(ROOT, "src/main.ts")], serviceEnv(dataDir))
  const account = hcc(dataDir, ["accounts", "create", "--name", "bench", "--tier", "unlimited", "--burst-limit", "1000000000", "--json"])
  const { token } = hcc(dataDir, ["tokens", "issue", "--account", account.id!, "--label", "bench", "--json"])
  const serviceUrl = `http://127.0.0.1:${service.port}`
  const headers = { authorization: `Bearer ${token!}`, "content-type": "application/json" }
  const catalog = await (await fetch(`${serviceUrl}/v1/catalog`, { headers })).text()
  const bare = await startProcess([join(ROOT, "bench/bare-server.ts")], { BENCH_CATALOG: catalog }, []) // plain node: the baseline
  // The other checkout serves a copy of this data folder (the same account and token), from its own code.
  let baseline: Awaited<ReturnType<typeof startProcess>> | undefined
  if (options.baseline !== undefined) {
    baseline = await startProcess([join(resolve(options.baseline), "src/main.ts")], serviceEnv(copyForBaseline(dataDir)), SERVER_NODE_FLAGS, resolve(options.baseline))
  }
  const sides = [
    { name: "bare node:http ", url: `http://127.0.0.1:${bare.port}`, pid: bare.child.pid },
    { name: "service        ", url: serviceUrl, pid: service.child.pid },
    ...(baseline === undefined ? [] : [{ name: "baseline       ", url: `http://127.0.0.1:${baseline.port}`, pid: baseline.child.pid }])
  ]
  const body = JSON.stringify({ values: Array.from({ length: 36 }, (_, i) => Math.round(50 + 30 * Math.sin(i / 3)) / 10) })
  try {
    const common = { connections, headers }
    // Every side in turn, `rounds` times, the order rotated every round: this machine's speed
    // drifts between minutes, and a drift then moves every side of a round's ratio alike.
    const measureAll = async (path: string, post: boolean) => {
      const target = (base: string) => ({ ...common, url: `${base}${path}`, ...(post ? { method: "POST" as const, body } : {}) })
      const label = `${post ? "POST" : "GET "} ${path}`
      const bySide = sides.map(() => [] as Array<BenchRow>)
      for (let round = 0; round < rounds; round++) {
        for (let k = 0; k < sides.length; k++) {
          const i = (k + round) % sides.length
          const side = sides[i]!
          bySide[i]!.push(await measure(`${side.name} ${label}`, target(side.url), seconds, { warm: round === 0, serverPid: side.pid }))
        }
      }
      // Each side's median round by req/s (its latency and CPU figures are that round's), and its
      // ratio to bare (and to the baseline) in every round.
      const middle = (rows: ReadonlyArray<BenchRow>) => rows.find((r) => r.reqPerSec === median(rows.map((x) => x.reqPerSec)))!
      const ratios = (of: number, to: number) => bySide[of]!.map((r, round) => r.reqPerSec / bySide[to]![round]!.reqPerSec)
      return {
        rows: bySide.map(middle),
        toBare: bySide.map((_, i) => ratios(i, 0)),
        toBaseline: baseline === undefined ? undefined : ratios(1, 2)
      }
    }
    const catalog = await measureAll("/v1/catalog", false)
    const charged = await measureAll("/v1/series-stats", true)
    const usage = await (await fetch(`${serviceUrl}/v1/usage`, { headers })).json() as { queries_today: number }
    // Against a baseline, also the server CPU per answered request at one fixed rate: it does not
    // depend on how fast the load generator, sharing the cores, can send.
    const fixedRate = baseline === undefined ? undefined : await cpuAtFixedRate(sides.slice(1), { headers, body, seconds, rounds })
    return { catalog, charged, fixedRate, ledgerRows: usage.queries_today, connections, seconds, rounds, baseline: options.baseline }
  } finally {
    service.child.kill("SIGTERM")
    bare.child.kill("SIGTERM")
    baseline?.child.kill("SIGTERM")
  }
}

/** The rate, connections and result of the fixed-rate CPU comparison. */
export interface FixedRateCpu {
  readonly rate: number
  readonly connections: number
  /** Per target, per side (this service, then the baseline): server CPU µs per answered request in each round. */
  readonly catalog: readonly [ReadonlyArray<number>, ReadonlyArray<number>]
  readonly charged: readonly [ReadonlyArray<number>, ReadonlyArray<number>]
}

/** Each side at one fixed rate (bench/steady.ts), in turn, `rounds` times: its CPU per answered request. */
const cpuAtFixedRate = async (
  sides: ReadonlyArray<{ readonly url: string; readonly pid: number | undefined }>,
  options: { readonly headers: Record<string, string>; readonly body: string; readonly seconds: number; readonly rounds: number }
): Promise<FixedRateCpu> => {
  const rate = 3000
  const connections = 20
  const one = async (side: (typeof sides)[number], path: string, post: boolean, warm: boolean) => {
    const load = { url: `${side.url}${path}`, headers: options.headers, rate, connections, seconds: options.seconds, ...(post ? { method: "POST" as const, body: options.body } : {}) }
    if (warm) await steadyLoad({ ...load, seconds: Math.max(1, Math.round(options.seconds / 4)) })
    const before = cpuSecondsOf(side.pid)
    const r = await steadyLoad(load)
    const after = cpuSecondsOf(side.pid)
    return before === undefined || after === undefined || r.ok === 0 ? Number.NaN : ((after - before) * 1e6) / r.ok
  }
  const measureBoth = async (path: string, post: boolean) => {
    const out: [Array<number>, Array<number>] = [[], []]
    for (let round = 0; round < options.rounds; round++) {
      for (const i of round % 2 === 0 ? [0, 1] : [1, 0]) out[i]!.push(await one(sides[i]!, path, post, round === 0))
    }
    return out
  }
  return { rate, connections, catalog: await measureBoth("/v1/catalog", false), charged: await measureBoth("/v1/series-stats", true) }
}

/** The fixed-rate CPU comparison: per target and side, the median round and every round. */
const fixedRateLines = (f: FixedRateCpu): Array<string> => {
  const us = (xs: ReadonlyArray<number>) => `${median(xs).toFixed(0)} (${xs.map((x) => x.toFixed(0)).join(", ")})`
  return [
    "",
    `At ${f.rate} requests/s over ${f.connections} connections (steady, each side in turn): server CPU µs per answered request, median (rounds)`,
    "",
    "| target | service | baseline | ratio |",
    "|---|---|---|---|",
    `| GET /v1/catalog | ${us(f.catalog[0])} | ${us(f.catalog[1])} | ${(median(f.catalog[0]) / median(f.catalog[1])).toFixed(2)} |`,
    `| POST /v1/series-stats | ${us(f.charged[0])} | ${us(f.charged[1])} | ${(median(f.charged[0]) / median(f.charged[1])).toFixed(2)} |`
  ]
}

/** Formats the result as the table printed by the CLI (and pasted into docs/benchmarks.md). */
export const formatHttpBench = (result: Awaited<ReturnType<typeof runHttpBench>>): string => {
  const cpu = (r: BenchRow) => (r.cpuMicrosPerRequest === undefined ? "n/a" : r.cpuMicrosPerRequest.toFixed(1))
  const withBaseline = result.baseline !== undefined
  const list = (ratios: ReadonlyArray<number>) => ratios.map((x) => x.toFixed(2)).join(", ")
  const lines = (m: typeof result.catalog) =>
    m.rows.map((r, i) =>
      `| ${r.name} | ${Math.round(r.reqPerSec).toLocaleString("en-US")} | ${r.p50} | ${r.p99} | ${cpu(r)} | ${i === 0 ? "1.00 (baseline)" : median(m.toBare[i]!).toFixed(2)} |` +
      (withBaseline ? ` ${i === 1 ? median(m.toBaseline!).toFixed(2) : i === 2 ? "1.00" : ""} |` : "") + ` ${r.non2xx + r.errors} |`
    )
  return [
    `${result.connections} connections, ${result.seconds} s per measurement after a warm-up, ${result.rounds} rounds of every side in turn (each row: that side's median round; a ratio: the median of the rounds' ratios); node ${process.version}; ledger rows written: ${result.ledgerRows}` +
    (withBaseline ? `; baseline: the checkout at ${result.baseline}` : ""),
    "",
    `| target | req/s | p50 ms | p99 ms | server CPU µs per request | ratio to bare |${withBaseline ? " ratio to baseline |" : ""} non-2xx + errors |`,
    `|---|---|---|---|---|---|${withBaseline ? "---|" : ""}---|`,
    ...lines(result.catalog),
    ...lines(result.charged),
    "",
    `Ratio to bare by round: catalog ${list(result.catalog.toBare[1]!)}; charged POST ${list(result.charged.toBare[1]!)}.` +
    (withBaseline ? ` Ratio to baseline by round: catalog ${list(result.catalog.toBaseline!)}; charged POST ${list(result.charged.toBaseline!)}.` : ""),
    ...(result.fixedRate === undefined ? [] : fixedRateLines(result.fixedRate))
  ].join("\n")
}

/** One endpoint at a fixed request rate. */
export interface FixedRateRow extends SteadyResult {
  readonly name: string
}

/** A fixed-rate run: its rows and settings. */
export interface FixedRateResult {
  readonly rows: ReadonlyArray<FixedRateRow>
  readonly rate: number
  readonly connections: number
  readonly seconds: number
  readonly patients: number
  readonly threads: number
  /** The other checkout measured beside this one, when there was one. */
  readonly baseline?: string | undefined
}

/**
 * Latency at a fixed rate: one process on a generated 50,000-patient dataset, a
 * steady open-loop client (bench/steady.ts: request i sent at i/rate s, latency from then) sending
 * `rate` requests/s over at most `connections` connections to one endpoint at a time (each domain's
 * documented example — the same question again, so repeated-question answers are what is measured
 * — and the catalog), reporting p50/p99/p99.9/max.
 */
export const runFixedRateBench = async (
  options: {
    readonly seconds?: number
    readonly rate?: number
    readonly connections?: number
    readonly patients?: number
    readonly threads?: number
    /** Extra V8 flags of a second server measured beside the first, endpoint by endpoint. */
    readonly compareFlags?: ReadonlyArray<string>
    /** Another built checkout of this service, serving a copy of the data folder, measured beside this one endpoint by endpoint. */
    readonly baseline?: string | undefined
  } = {}
): Promise<FixedRateResult> => {
  const seconds = options.seconds ?? 10
  const threads = options.threads ?? 0
  const rate = options.rate ?? 1000
  const connections = options.connections ?? 50
  const patients = options.patients ?? 50_000
  const dataDir = mkdtempSync(join(tmpdir(), "hcc-bench-rate-"))
  const sides = [
    { label: "", flags: [] as ReadonlyArray<string>, root: ROOT, copy: false },
    ...(options.compareFlags === undefined ? [] : [{ label: ` (${options.compareFlags.join(" ")})`, flags: options.compareFlags, root: ROOT, copy: false }]),
    ...(options.baseline === undefined ? [] : [{ label: " (baseline)", flags: [] as ReadonlyArray<string>, root: resolve(options.baseline), copy: true }])
  ]
  const envOf = (folder: string) => ({ PORT: "0", HOST: "127.0.0.1", HCC_DATA_DIR: folder, HCC_LOG_LEVEL: "info", HCC_POPULATION: String(patients), HCC_THREADS: String(threads) })
  // The first server generates the dataset and the account is made; a server with other flags
  // loads the same folder, the baseline checkout a copy of it (its own snapshot, the same token).
  const services: Array<Awaited<ReturnType<typeof startProcess>>> = []
  let token: string | undefined
  try {
    for (const side of sides) {
      const folder = side.copy ? copyForBaseline(dataDir) : dataDir
      const service = await startProcess([join(side.root, "src/main.ts")], envOf(folder), [...SERVER_NODE_FLAGS, ...side.flags], side.root)
      services.push(service)
      while ((await fetch(`http://127.0.0.1:${service.port}/readyz`)).status !== 200) await new Promise((r) => setTimeout(r, 200))
      if (token === undefined) {
        const account = hcc(dataDir, ["accounts", "create", "--name", "bench-rate", "--tier", "unlimited", "--burst-limit", "1000000000", "--json"])
        token = hcc(dataDir, ["tokens", "issue", "--account", account.id!, "--label", "bench", "--json"]).token
      }
    }
    const headers = { authorization: `Bearer ${token!}`, "content-type": "application/json" }
    const { default: builtins } = await import("../plugins/index.ts")
    const targets: Array<{ name: string; path: string; body?: string }> = [
      { name: "GET  /v1/catalog", path: "/v1/catalog" },
      ...builtins.map((p) => ({ name: `POST ${p.path}`, path: p.path, body: JSON.stringify(p.examples![0]!.request) }))
    ]
    const rows: Array<FixedRateRow> = []
    for (const t of targets) {
      for (const [i, side] of sides.entries()) {
        const base = { url: `http://127.0.0.1:${services[i]!.port}${t.path}`, connections, headers, rate, ...(t.body === undefined ? {} : { method: "POST" as const, body: t.body }) }
        await steadyLoad({ ...base, seconds: Math.max(1, Math.round(seconds / 4)) }) // warm-up
        rows.push({ name: `${t.name}${side.label}`, ...(await steadyLoad({ ...base, seconds })) })
      }
    }
    return { rows, rate, connections, seconds, patients, threads, baseline: options.baseline }
  } finally {
    for (const service of services) {
      service.child.kill("SIGTERM")
      await new Promise((r) => service.child.once("exit", r))
    }
    rmSync(dataDir, { recursive: true, force: true })
  }
}

const ms = (v: number) => (v < 10 ? v.toFixed(2) : v.toFixed(1))

export const formatFixedRateBench = (result: FixedRateResult): string =>
  [
    `Fixed rate: ${result.rate} req/s, evenly spaced (open loop, latency from when each request was due), at most ${result.connections} connections, ${result.seconds} s per endpoint after a warm-up, one process with ${result.threads} compute threads (HCC_THREADS), ${result.patients.toLocaleString("en-US")} patients` +
      (result.baseline === undefined ? "" : `; (baseline): the checkout at ${result.baseline}, on a copy of the same data, each endpoint right after this one's`),
    "",
    "| endpoint | requests | p50 ms | p99 ms | p99.9 ms | max ms | not 2xx | client's worst send lag ms |",
    "|---|---|---|---|---|---|---|---|",
    ...result.rows.map((r) => `| ${r.name} | ${r.sent.toLocaleString("en-US")} | ${ms(r.p50)} | ${ms(r.p99)} | ${ms(r.p999)} | ${ms(r.max)} | ${r.failed} | ${ms(r.sendLagMax)} |`)
  ].join("\n")

/** The fixed-rate run on the HTTP thread alone and with 2 compute threads, one after the other. */
const fixedRateSideBySide = async (seconds: number, compareFlags?: ReadonlyArray<string>, baseline?: string) => {
  for (const threads of [0, 2]) {
    console.log(formatFixedRateBench(await runFixedRateBench({ seconds, threads, baseline, ...(compareFlags === undefined ? {} : { compareFlags }) })))
    console.log("")
  }
}

if (import.meta.main) {
  const fixedOnly = process.argv.includes("--fixed-rate")
  const seconds = Number(process.argv.slice(2).find((a) => !a.startsWith("--")) ?? process.env.BENCH_SECONDS ?? 10)
  const rounds = Number(process.argv.find((a) => a.startsWith("--rounds="))?.slice("--rounds=".length) ?? 3)
  const baseline = process.argv.find((a) => a.startsWith("--baseline="))?.slice("--baseline=".length)
  if (!Number.isInteger(rounds) || rounds < 1) {
    console.error("bench:http: --rounds=N takes a whole number of rounds, 1 or more (default 3)")
    process.exit(2)
  }
  // `--compare-flags="--max-semi-space-size=8"`: a second server with these V8 flags beside the first.
  const compareFlags = process.argv.find((a) => a.startsWith("--compare-flags="))?.slice("--compare-flags=".length).split(" ").filter((f) => f !== "")
  if (fixedOnly) {
    await fixedRateSideBySide(seconds, compareFlags, baseline)
  } else {
    runHttpBench({ seconds, rounds, baseline }).then(async (r) => {
      console.log(formatHttpBench(r))
      console.log("")
      // Against another checkout the request path is what is compared; the rest measures this one.
      if (baseline !== undefined) return
      const { formatScaleBench, runScaleBench } = await import("./scale.ts")
      console.log(formatScaleBench(await runScaleBench({ seconds })))
      console.log("")
      await fixedRateSideBySide(seconds)
    }, (e: unknown) => {
      console.error(e)
      process.exitCode = 1
    })
  }
}
