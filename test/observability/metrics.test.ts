/**
 * GET /metrics on its own listener (HCC_METRICS_PORT): scraped and parsed with a Prometheus
 * text-format parser (parse-prometheus-text-format: families, types, labelled counters and gauges),
 * the counters move with the requests sent; with `--workers 2` the primary answers for every worker.
 * That parser folds a histogram's labelled series into one, so histogram counts are read from their
 * `_count` sample lines.
 */
import parse, { type Family } from "parse-prometheus-text-format"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import builtins from "../../plugins/index.ts"
import { call, fixturePlugin, newAccount, startServer, type TestServer, waitForLog, waitReady } from "../support/server.ts"

type Scrape = Array<Family> & { readonly text: string }

const scrape = async (url: string): Promise<Scrape> => {
  const res = await fetch(url)
  expect(res.status).toBe(200)
  expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8")
  const text = await res.text()
  return Object.assign(parse(text), { text })
}

/** A histogram's `_count` samples: labels → count. */
const histogramCounts = (text: string, name: string) =>
  text.split("\n").flatMap((line) => {
    const m = new RegExp(`^${name}_count(?:\\{(.*)\\})? (\\S+)$`).exec(line)
    if (m === null) return []
    const labels = Object.fromEntries([...(m[1] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1]!, l[2]!]))
    return [{ labels, value: m[2]! }]
  })

/** Sum of a family's samples whose labels include `match`. */
const total = (families: Scrape, name: string, match: Record<string, string> = {}): number => {
  const family = families.find((f) => f.name === name)
  if (family === undefined) return 0
  const samples = family.type === "HISTOGRAM" ? histogramCounts(families.text, name) : family.metrics
  let sum = 0
  for (const m of samples) {
    if (!Object.entries(match).every(([k, v]) => m.labels?.[k] === v)) continue
    sum += Number(m.value)
  }
  return sum
}

const metricsUrl = async (server: TestServer) => {
  const line = await waitForLog(server, (l) => l.msg === "metrics listening", 30_000)
  expect(line.host).toBe("127.0.0.1")
  return `http://127.0.0.1:${String(line.port)}/metrics`
}

describe("one process", () => {
  let server: TestServer
  let url: string
  beforeAll(async () => {
    server = await startServer({ env: { HCC_METRICS_PORT: "0", HCC_PLUGINS: fixturePlugin("series-stats") } })
    url = await metricsUrl(server)
    await waitReady(server)
  })
  afterAll(async () => {
    await server.stop()
  })

  it("answers a repeated one-health or device-outcomes question from the per-dataset cache: its kernels run once", async () => {
    const { token } = newAccount(server, { tier: "unlimited", burstLimit: 1_000_000 })
    for (const plugin of builtins.filter((p) => p.name === "one-health" || p.name === "device-outcomes")) {
      const body = plugin.examples![0]!.request
      const kernelCalls = async () => total(await scrape(url), "hcc_kernel_duration_seconds")
      const answers: Array<unknown> = []
      const moved: Array<number> = []
      for (let i = 0; i < 2; i++) {
        const before = await kernelCalls()
        const res = await call(server, plugin.path, { token, body })
        expect(res.status, plugin.name).toBe(200)
        const { request_id: _, ...answer } = (await res.json()) as Record<string, unknown>
        answers.push(answer)
        moved.push((await kernelCalls()) - before)
      }
      expect(moved[0], plugin.name).toBeGreaterThan(0)
      expect(moved[1], plugin.name).toBe(0)
      expect(answers[1]).toEqual(answers[0])
    }
  })

  it("counts requests by route and status, credits, 429s by limit, ledger commits and kernel calls", async () => {
    const before = await scrape(url)
    const account = newAccount(server, { tier: "professional", burstLimit: 3 })
    let credits = 0
    for (let i = 0; i < 3; i++) {
      const res = await call(server, "/v1/series-stats", { token: account.token, body: { values: [1, 2, i] } })
      expect(res.status).toBe(200)
      credits += ((await res.json()) as { hcc_cost: number }).hcc_cost
    }
    const refused = await call(server, "/v1/series-stats", { token: account.token, body: { values: [1] } })
    expect(refused.status).toBe(429)
    expect(((await refused.json()) as { limit: string }).limit).toBe("burst")
    expect((await call(server, "/v1/catalog")).status).toBe(200)
    expect((await call(server, "/no/such/path")).status).toBe(404)
    const population = await call(server, "/v1/population", { body: { analysis_type: "trend" } })
    expect(population.status).toBe(200)
    credits += ((await population.json()) as { hcc_cost: number }).hcc_cost

    const after = await scrape(url)
    const moved = (name: string, match: Record<string, string> = {}) => total(after, name, match) - total(before, name, match)
    expect(moved("hcc_http_requests_total", { route: "/v1/series-stats", method: "POST", status: "200" })).toBe(3)
    expect(moved("hcc_http_requests_total", { route: "/v1/series-stats", method: "POST", status: "429" })).toBe(1)
    expect(moved("hcc_http_requests_total", { route: "/v1/catalog", status: "200" })).toBe(1)
    // Unknown paths share one label value: a scanner cannot blow up the series count.
    expect(moved("hcc_http_requests_total", { route: "unmatched", status: "404" })).toBe(1)
    expect(moved("hcc_http_request_duration_seconds", { route: "/v1/series-stats" })).toBe(4)
    expect(moved("hcc_rate_limited_total", { limit: "burst" })).toBe(1)
    expect(moved("hcc_credits_charged_total")).toBeCloseTo(credits, 9)
    expect(moved("hcc_ledger_rows_total")).toBe(4)
    expect(moved("hcc_ledger_commit_duration_seconds")).toBeGreaterThanOrEqual(1)
    // Every ledger commit is followed by its flush of the write-ahead log, off the event loop.
    expect(moved("hcc_sqlite_wal_flush_duration_seconds")).toBe(moved("hcc_ledger_commit_duration_seconds"))
    expect(moved("hcc_kernel_duration_seconds", { kernel: "panelSums" })).toBeGreaterThanOrEqual(1)

    // Dataset state, process and event-loop series.
    expect(total(after, "hcc_dataset_ready")).toBe(1)
    expect(total(after, "hcc_dataset_patients")).toBe(1000)
    expect(total(after, "hcc_dataset_load_seconds")).toBeGreaterThan(0)
    expect(total(after, "process_resident_memory_bytes")).toBeGreaterThan(10_000_000)
    expect(total(after, "process_cpu_seconds_total")).toBeGreaterThan(0)
    expect(after.find((f) => f.name === "nodejs_eventloop_lag_p99_seconds")?.type).toBe("GAUGE")
    // Lateness, not the monitor's own 10 ms interval: a mostly idle server's median is well under it.
    expect(total(after, "nodejs_eventloop_lag_p50_seconds")).toBeLessThan(0.01)
    expect(after.find((f) => f.name === "hcc_http_request_duration_seconds")?.type).toBe("HISTOGRAM")
  })

  it("is not on the API's port, and the metrics listener serves nothing else", async () => {
    expect((await call(server, "/metrics", { token: null })).status).toBe(404)
    expect((await fetch(url.replace("/metrics", "/v1/catalog"))).status).toBe(404)
    expect((await fetch(url, { method: "POST" })).status).toBe(405)
  })

  it("logs request lines but never a scrape (the listener is not the API)", () => {
    expect(server.logLines().some((l) => l.msg === "request" && l.path === "/metrics" && l.status !== 404)).toBe(false)
  })
})

describe("without HCC_METRICS_PORT", () => {
  it("no metrics listener is started", async () => {
    const server = await startServer()
    try {
      // Ready: every layer of the service has been built, a metrics listener's included.
      await waitReady(server)
      expect(server.logLines().some((l) => l.msg === "metrics listening")).toBe(false)
    } finally {
      await server.stop()
    }
  })
})

describe("hcc serve --workers 2", () => {
  it("the primary's /metrics covers every worker, each sample labelled with its worker", async () => {
    const server = await startServer({ serveArgs: ["--workers", "2"], env: { HCC_METRICS_PORT: "0" } })
    try {
      const url = await metricsUrl(server)
      await waitForLog(server, () => server.logLines().filter((x) => x.msg === "listening").length >= 2, 30_000)
      const n = 40
      // New connections each time, so both workers take some.
      for (let i = 0; i < n; i++) {
        const res = await fetch(`${server.url}/v1/catalog`, { headers: { authorization: `Bearer ${server.demoToken}`, connection: "close" } })
        expect(res.status).toBe(200)
      }
      const families = await scrape(url)
      const requests = families.find((f) => f.name === "hcc_http_requests_total")!
      const workers = new Set(requests.metrics.map((m) => m.labels?.worker))
      expect(workers).toEqual(new Set(["1", "2"]))
      expect(total(families, "hcc_http_requests_total", { route: "/v1/catalog", status: "200" })).toBe(n)
      // Process series from the primary and from each worker.
      const rss = families.find((f) => f.name === "process_resident_memory_bytes")!
      expect(new Set(rss.metrics.map((m) => m.labels?.worker))).toEqual(new Set(["primary", "1", "2"]))
    } finally {
      await server.stop()
    }
  })
})
