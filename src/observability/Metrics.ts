/**
 * The service's metrics, kept with Effect's own `Metric` in the process's default registry and
 * rendered in the Prometheus text format by `effect/observability` (PrometheusMetrics); the same
 * registry feeds the OTLP metrics exporter when one is configured (Otel.ts).
 *
 * Updated from plain code on hot paths (the request guard, the kernels, the ledger writer) with
 * `updateUnsafe` on the default registry: no fiber, no allocation per update once a label set has
 * been seen. Label values are bounded: routes come from the route table (anything else is
 * `unmatched`), statuses are HTTP codes, kernels and limits are fixed lists.
 *
 * Names follow Prometheus conventions (seconds, bytes, `_total` for counters); the process and
 * event-loop series use prom-client's names so existing Node dashboards read them.
 */
import * as Context from "effect/Context"
import * as Metric from "effect/Metric"
import * as PrometheusMetrics from "effect/observability/PrometheusMetrics"
import { readdirSync } from "node:fs"
import { monitorEventLoopDelay } from "node:perf_hooks"

/** The context every update and scrape uses: the process's default metric registry. */
const context = Context.empty()

/** Seconds buckets for request latencies: 1 ms … 10 s. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
/** Seconds buckets for kernel calls and ledger commits: 50 µs … 2.5 s. */
const FAST_BUCKETS = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 2.5]

const ledgerCommit = Metric.histogram("hcc_ledger_commit_duration_seconds", {
  description: "Time of one ledger group commit (one transaction for a batch of charged answers)",
  boundaries: FAST_BUCKETS
})
const walFlush = Metric.histogram("hcc_sqlite_wal_flush_duration_seconds", {
  description: "Time of one flush of SQLite's write-ahead log to the disk (an fdatasync off the event loop, after each ledger commit)",
  boundaries: FAST_BUCKETS
})
const ledgerRows = Metric.counter("hcc_ledger_rows_total", { description: "Ledger rows committed", incremental: true })
const datasetReady = Metric.gauge("hcc_dataset_ready", { description: "1 once the health dataset is loaded and prepared, else 0" })
const datasetPatients = Metric.gauge("hcc_dataset_patients", { description: "Patients in the loaded health dataset" })
const datasetLoad = Metric.gauge("hcc_dataset_load_seconds", { description: "Seconds the last load of the health dataset took (read, columns, preparation)" })
const datasetProgress = Metric.gauge("hcc_dataset_load_progress", { description: "Share (0–1) of the dataset's generation or loading done; 1 when ready" })

/**
 * One metric per label set, made once with its labels as its own attributes (Prometheus labels).
 * Not `Metric.withAttributes`: that merges the labels into a new context on every update, and the
 * metric then sorts them into its series key again each time (a measurable share of a request's
 * allocation on the HTTP thread); a metric made with its attributes computes its key once.
 */
const labelled = <M>(make: (attributes: Record<string, string>) => M) => {
  const made = new Map<string, M>()
  return (key: string, labels: Record<string, string>): M => {
    let m = made.get(key)
    if (m === undefined) {
      m = make(labels)
      made.set(key, m)
    }
    return m
  }
}
const requestsBy = labelled((attributes) =>
  Metric.counter("hcc_http_requests_total", { description: "HTTP requests answered, by route, method and status", incremental: true, attributes })
)
const latencyBy = labelled((attributes) =>
  Metric.histogram("hcc_http_request_duration_seconds", { description: "Time from a request's arrival to its answer, by route", boundaries: LATENCY_BUCKETS, attributes })
)
const limitedBy = labelled((attributes) =>
  Metric.counter("hcc_rate_limited_total", { description: "Requests refused with 429, by the limit that refused them (daily or burst)", incremental: true, attributes })
)
const creditsBy = labelled((attributes) =>
  Metric.counter("hcc_credits_charged_total", { description: "HCC credits charged (the hcc_cost of successful answers), by route", incremental: true, attributes })
)
const kernelBy = labelled((attributes) =>
  Metric.histogram("hcc_kernel_duration_seconds", { description: "Time of one compute-kernel call, by kernel", boundaries: FAST_BUCKETS, attributes })
)

/** Records one answered request (the guard calls this for every answer). */
export const recordRequest = (route: string, method: string, status: number, seconds: number, hccCost: number, limit: string | undefined): void => {
  requestsBy(`${route} ${method} ${status}`, { route, method, status: String(status) }).updateUnsafe(1, context)
  latencyBy(route, { route }).updateUnsafe(seconds, context)
  if (hccCost > 0) creditsBy(route, { route }).updateUnsafe(hccCost, context)
  if (status === 429 && limit !== undefined) limitedBy(limit, { limit }).updateUnsafe(1, context)
}


/** Records one kernel call. */
export const recordKernel = (kernel: string, seconds: number): void => kernelBy(kernel, { kernel }).updateUnsafe(seconds, context)

/** Records one ledger group commit of `rows` rows. */
export const recordLedgerCommit = (seconds: number, rows: number): void => {
  ledgerCommit.updateUnsafe(seconds, context)
  ledgerRows.updateUnsafe(rows, context)
}

/** Records one flush of SQLite's write-ahead log. */
export const recordWalFlush = (seconds: number): void => walFlush.updateUnsafe(seconds, context)

/** The dataset's state: loading (with the share done) or ready (patients, load seconds). */
export const recordDatasetLoading = (progress: number): void => {
  datasetReady.updateUnsafe(0, context)
  datasetProgress.updateUnsafe(progress, context)
}
export const recordDatasetReady = (patients: number, loadSeconds: number): void => {
  datasetReady.updateUnsafe(1, context)
  datasetProgress.updateUnsafe(1, context)
  datasetPatients.updateUnsafe(patients, context)
  datasetLoad.updateUnsafe(loadSeconds, context)
}

// Process and event-loop series, read when scraped (prom-client's names).
const LOOP_RESOLUTION_MS = 10
const loopDelay = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS })
/** A delay the monitor recorded, in seconds, less its own timer interval (it records the whole interval: 10 ms when idle). */
const lagSeconds = (ns: number) => Math.max(0, ns / 1e9 - LOOP_RESOLUTION_MS / 1000)
loopDelay.enable()
const startSeconds = Math.round((Date.now() - performance.now()) / 1000)

/** A gauge whose value is read at scrape time. */
const readGauge = (name: string, description: string, read: () => number) =>
  Metric.registerUnsafe(Metric.gauge(name, { description }), context, {
    get: () => ({ value: read() }),
    update: () => {},
    modify: () => {}
  })
/** A counter whose running total is read at scrape time. */
const readCounter = (name: string, description: string, read: () => number) =>
  Metric.registerUnsafe(Metric.counter(name, { description, incremental: true }), context, {
    get: () => ({ count: read(), incremental: true }),
    update: () => {},
    modify: () => {}
  })

readCounter("process_cpu_user_seconds_total", "User CPU time spent, in seconds", () => process.cpuUsage().user / 1e6)
readCounter("process_cpu_system_seconds_total", "System CPU time spent, in seconds", () => process.cpuUsage().system / 1e6)
readCounter("process_cpu_seconds_total", "User and system CPU time spent, in seconds", () => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1e6
})
readGauge("process_start_time_seconds", "Start time of the process since the Unix epoch, in seconds", () => startSeconds)
readGauge("process_resident_memory_bytes", "Resident memory size, in bytes", () => process.memoryUsage.rss())
readGauge("process_open_fds", "Open file descriptors", () => {
  try {
    return readdirSync("/proc/self/fd").length
  } catch {
    return Number.NaN
  }
})
readGauge("nodejs_heap_size_total_bytes", "V8 heap size, in bytes", () => process.memoryUsage().heapTotal)
readGauge("nodejs_heap_size_used_bytes", "V8 heap used, in bytes", () => process.memoryUsage().heapUsed)
readGauge("nodejs_external_memory_bytes", "Memory outside the V8 heap held by JS objects (buffers, WebAssembly memory), in bytes", () => process.memoryUsage().external)
readGauge("nodejs_eventloop_lag_p50_seconds", "Median event-loop delay since the last scrape (how late a 10 ms timer fired), in seconds", () => lagSeconds(loopDelay.percentile(50)))
readGauge("nodejs_eventloop_lag_p99_seconds", "99th-percentile event-loop delay since the last scrape (how late a 10 ms timer fired), in seconds", () => lagSeconds(loopDelay.percentile(99)))
readGauge("nodejs_eventloop_lag_max_seconds", "Longest event-loop delay since the last scrape (how late a 10 ms timer fired), in seconds", () => lagSeconds(loopDelay.max))

/** This process's metrics in the Prometheus text format (0.0.4); the event-loop window restarts. */
export const scrape = (): string => {
  const text = PrometheusMetrics.formatUnsafe(context)
  loopDelay.reset()
  return text
}

/** Content type of {@link scrape}'s text. */
export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

/**
 * Merges the texts of several processes (cluster workers) into one exposition: every sample gains
 * the label `worker="<id>"`, each family's HELP and TYPE are written once. Prometheus sums across
 * workers with `sum without (worker) (…)`.
 */
export const mergeExpositions = (parts: ReadonlyArray<{ readonly worker: string; readonly text: string }>): string => {
  const families = new Map<string, { help: string | undefined; type: string | undefined; samples: Array<string> }>()
  const familyOf = (name: string) => {
    let f = families.get(name)
    if (f === undefined) {
      f = { help: undefined, type: undefined, samples: [] }
      families.set(name, f)
    }
    return f
  }
  for (const { text, worker } of parts) {
    const label = `worker="${worker.replace(/[\\"\n]/g, "_")}"`
    let current = ""
    for (const line of text.split("\n")) {
      if (line === "") continue
      const meta = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line)
      if (meta !== null) {
        current = meta[2]!
        const f = familyOf(current)
        if (meta[1] === "HELP") f.help ??= line
        else f.type ??= line
        continue
      }
      if (line.startsWith("#")) continue
      const brace = line.indexOf("{")
      const space = line.indexOf(" ")
      const sample = brace !== -1 && brace < space
        ? `${line.slice(0, brace + 1)}${label},${line.slice(brace + 1)}`
        : `${line.slice(0, space)}{${label}}${line.slice(space)}`
      familyOf(current === "" ? line.slice(0, brace !== -1 && brace < space ? brace : space) : current).samples.push(sample)
    }
  }
  const out: Array<string> = []
  for (const f of families.values()) {
    if (f.help !== undefined) out.push(f.help)
    if (f.type !== undefined) out.push(f.type)
    out.push(...f.samples)
  }
  return out.length === 0 ? "" : out.join("\n") + "\n"
}
