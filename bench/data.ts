/**
 * `npm run bench:data`: the health dataset at the default size (50,000 patients unless given):
 * generation time (`hcc data generate`), load time and RSS of a server starting on it, then the
 * data endpoints under load (autocannon: clinical, population, drug-outcomes, risk-model, one-health, device-outcomes), side by side with two baselines on
 * the same server: the catalog (free: auth, burst limit, a precomputed body) and the series-stats
 * fixture plugin (charged: the same plus daily reservation and the durable ledger row per call).
 */
import { spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { type BenchRow, measure } from "./http.ts"
import { hcc, startProcess } from "./processes.ts"

const ROOT = resolve(import.meta.dirname, "..")

/** Endpoint, label, body. */
const REQUESTS: ReadonlyArray<readonly [string, string, unknown]> = [
  ["/v1/clinical", "spec sample (metformin + lisinopril, declining NM, 6 months, structured)", { query: "Patient on metformin + lisinopril with declining NM axis. Suggest intervention.", axes: ["PO", "NM", "ER"], time_range: "6_months", response_format: "structured" }],
  ["/v1/clinical", "spec sample, sql_like", { query: "Patient on metformin + lisinopril with declining NM axis. Suggest intervention.", axes: ["PO", "NM", "ER"], time_range: "6_months", response_format: "sql_like" }],
  ["/v1/population", "everyone, quarterly, 8 axes", { analysis_type: "trend" }],
  ["/v1/population", "heart_failure, quarterly, 8 axes", { cohort_definition: { conditions: ["heart_failure"] }, analysis_type: "trend" }],
  ["/v1/population", "spec sample (T2D, 45-65, PO ≥ 5)", { cohort_definition: { age_range: "45-65", axes_threshold: { PO: { min: 5 } }, conditions: ["type_2_diabetes"] }, analysis_type: "trend", granularity: "quarterly" }],
  ["/v1/drug-outcomes", "spec sample (metformin, efficacy, NM + PO)", { drug: "metformin", outcome_type: "efficacy", axes_filter: ["NM", "PO"], population_size: "minimum_500" }],
  ["/v1/drug-outcomes", "lisinopril, all 8 axes", { drug: "lisinopril" }],
  ["/v1/risk-model", "spec sample (hospitalization, 90 days)", { patient_profile: { axes_snapshot: { PO: 6.2, NM: 4.1, ER: 7.8 }, age_range: "55-64", conditions: ["type_2_diabetes", "hypertension"] }, risk_type: "hospitalization", horizon: "90_days" }],
  ["/v1/risk-model", "readmission, 8 axes, 3 conditions, 30 days", { patient_profile: { axes_snapshot: { PO: 3.1, NM: 4.4, ER: 5.0, SC: 6.2, RS: 7.0, ES: 5.5, TA: 6.1, PV: 4.9 }, age_range: "75-84", conditions: ["heart_failure", "chronic_kidney_disease", "copd"] }, risk_type: "readmission", horizon: "30_days" }],
  ["/v1/one-health", "spec sample (poultry, avian_influenza, southeast_asia)", { query_type: "cross_species_correlation", human_condition: "avian_influenza", animal_species: "poultry", geographic_scope: "southeast_asia" }],
  ["/v1/device-outcomes", "knee_implant, 7 metrics, 36 months", { device_category: "knee_implant", outcome_metrics: ["complication_rate", "revision_rate", "infection_rate", "device_failure_rate", "patient_satisfaction", "pain_reduction", "quality_of_life"], time_period: "36_months" }],
  ["/v1/device-outcomes", "cardiac_pacemaker, complication_rate, 12 months", { device_category: "cardiac_pacemaker", outcome_metrics: ["complication_rate"] }]
]

/** Resident set size of a process, in MiB (Linux /proc). */
const rssMiB = (pid: number): number => {
  const line = readFileSync(`/proc/${pid}/status`, "utf8").split("\n").find((l) => l.startsWith("VmRSS:"))
  return Math.round(Number(line?.split(/\s+/)[1] ?? Number.NaN) / 1024)
}

export const runDataBench = async (options: { readonly patients?: number; readonly seconds?: number; readonly connections?: number } = {}) => {
  const patients = options.patients ?? 50_000
  const seconds = options.seconds ?? 10
  const connections = options.connections ?? 10
  const dataDir = mkdtempSync(join(tmpdir(), "hcc-bench-data-"))

  const t0 = performance.now()
  const gen = spawnSync(process.execPath, [join(ROOT, "src/cli.ts"), "data", "generate", "--patients", String(patients)], {
    cwd: ROOT, env: { ...process.env, HCC_DATA_DIR: dataDir }, encoding: "utf8"
  })
  if (gen.status !== 0) throw new Error(gen.stderr)
  const generateWallSeconds = (performance.now() - t0) / 1000
  const generateSeconds = Number(/in (\d+\.\d) s/.exec(gen.stdout)?.[1])

  const t1 = performance.now()
  const service = await startProcess([join(ROOT, "src/main.ts")], {
    PORT: "0",
    HOST: "127.0.0.1",
    HCC_DATA_DIR: dataDir,
    HCC_LOG_LEVEL: "info",
    HCC_PLUGINS: "./test/fixtures/plugins/series-stats.ts"
  })
  const url = `http://127.0.0.1:${service.port}`
  let loaded: { seconds: number; rss_mib: number } | undefined
  let log = service.early
  service.child.stdout!.on("data", (d: Buffer) => {
    if (log.length < 1_000_000) log += d.toString()
  })
  try {
    for (;;) {
      const res = await fetch(`${url}/readyz`)
      await res.arrayBuffer()
      if (res.status === 200) break
      await new Promise((r) => setTimeout(r, 50))
    }
    const readySeconds = (performance.now() - t1) / 1000
    await new Promise((r) => setTimeout(r, 100)) // the log line is flushed once per event-loop turn
    loaded = log.split("\n").filter((l) => l.includes('"health data loaded"')).map((l) => JSON.parse(l) as { seconds: number; rss_mib: number })[0]
    const rssReady = rssMiB(service.child.pid!)

    const account = hcc(dataDir, ["accounts", "create", "--name", "bench", "--tier", "unlimited", "--burst-limit", "1000000000", "--json"])
    const { token } = hcc(dataDir, ["tokens", "issue", "--account", account.id!, "--label", "bench", "--json"])
    const headers = { authorization: `Bearer ${token!}`, "content-type": "application/json" }
    const rows: Array<BenchRow> = []
    rows.push(await measure("GET  /v1/catalog (baseline: free call)", { connections, headers, url: `${url}/v1/catalog` }, seconds))
    const stats = JSON.stringify({ values: Array.from({ length: 36 }, (_, i) => i / 10) })
    rows.push(await measure("POST /v1/series-stats (baseline: charged call)", { connections, headers, url: `${url}/v1/series-stats`, method: "POST", body: stats }, seconds))
    for (const [path, name, body] of REQUESTS) {
      rows.push(await measure(`POST ${path}: ${name}`, { connections, headers, url: `${url}${path}`, method: "POST", body: JSON.stringify(body) }, seconds))
    }
    // The cold path: population answers are kept per dataset, so a repeated body measures a
    // look-up. Here every request asks about a slightly different age range (3,000 distinct
    // cohorts of 45,000-50,000 patients), so each one is computed.
    let counter = 0
    rows.push(await measure("POST /v1/population: near-everyone, a new age range each request (cold)", {
      connections,
      headers,
      url: `${url}/v1/population`,
      method: "POST",
      requests: [{
        method: "POST",
        setupRequest: (request) => {
          const i = counter++
          return { ...request, body: JSON.stringify({ cohort_definition: { age_range: `${i % 50}-${120 - (Math.floor(i / 50) % 60)}` }, analysis_type: "trend" }) }
        }
      }]
    }, seconds))
    // Clinical evidence is kept per dataset by what it depends on (drugs, conditions, axes, window);
    // here each request names another drug pair, condition and time range (2,250 combinations).
    const drugs = ["metformin", "lisinopril", "atorvastatin", "amlodipine", "sertraline", "warfarin", "aspirin", "ibuprofen", "levothyroxine", "omeprazole"]
    const pairs = drugs.flatMap((a, i) => drugs.slice(i + 1).map((b) => [a, b] as const))
    const conditions = ["type_2_diabetes", "hypertension", "heart_failure", "chronic_kidney_disease", "copd", "asthma", "depression", "obesity", "osteoarthritis", "hypothyroidism"]
    const ranges = ["30_days", "90_days", "6_months", "1_year", "all"]
    let asked = 0
    rows.push(await measure("POST /v1/clinical: a new drug pair, condition and time range each request (cold)", {
      connections,
      headers,
      url: `${url}/v1/clinical`,
      method: "POST",
      requests: [{
        method: "POST",
        setupRequest: (request) => {
          const i = asked++
          const [a, b] = pairs[i % pairs.length]!
          const query = `Patient on ${a} and ${b} with ${conditions[Math.floor(i / pairs.length) % conditions.length]!.replaceAll("_", " ")}, NM declining?`
          return { ...request, body: JSON.stringify({ query, axes: ["PO", "NM", "ER"], time_range: ranges[Math.floor(i / (pairs.length * conditions.length)) % ranges.length] }) }
        }
      }]
    }, seconds))
    return { patients, generateSeconds, generateWallSeconds, readySeconds, loadSeconds: loaded?.seconds ?? Number.NaN, rssLoadedMiB: loaded?.rss_mib ?? Number.NaN, rssReady, rssAfterLoad: rssMiB(service.child.pid!), rows, connections, seconds }
  } finally {
    service.child.kill("SIGTERM")
  }
}

export const formatDataBench = (r: Awaited<ReturnType<typeof runDataBench>>): string => {
  const base = r.rows[1]!
  return [
    `${r.patients.toLocaleString("en-US")} patients; node ${process.version}`,
    "",
    `- generate (hcc data generate): ${r.generateSeconds.toFixed(1)} s inside the command, ${r.generateWallSeconds.toFixed(1)} s wall including process start`,
    `- load at start-up: ${r.loadSeconds.toFixed(2)} s (server start to /readyz 200: ${r.readySeconds.toFixed(2)} s)`,
    `- RSS: ${r.rssReady} MiB once ready, ${r.rssAfterLoad} MiB after the load test`,
    "",
    `${r.connections} connections, ${r.seconds} s per target after a warm-up`,
    "",
    "| target | req/s | p50 ms | p99 ms | req/s ratio to the charged baseline | non-2xx + errors |",
    "|---|---|---|---|---|---|",
    ...r.rows.map((row, i) =>
      `| ${row.name} | ${Math.round(row.reqPerSec).toLocaleString("en-US")} | ${row.p50} | ${row.p99} | ${i === 1 ? "1.00 (baseline)" : (row.reqPerSec / base.reqPerSec).toFixed(3)} | ${row.non2xx + row.errors} |`)
  ].join("\n")
}

if (import.meta.main) {
  const patients = Number(process.argv[2] ?? 50_000)
  const seconds = Number(process.argv[3] ?? process.env.BENCH_SECONDS ?? 10)
  runDataBench({ patients, seconds }).then((r) => console.log(formatDataBench(r)), (e: unknown) => {
    console.error(e)
    process.exitCode = 1
  })
}
