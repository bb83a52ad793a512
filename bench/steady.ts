/**
 * A steady (open-loop) load generator for the fixed-rate rows of `bench:http`.
 *
 * Request i is due at t0 + i/rate and is sent then, whether or not earlier answers have come back,
 * over a pool of keep-alive connections; its latency is counted from when it was due, so a server
 * that falls behind is charged for the wait it causes (no coordinated omission). autocannon's
 * `overallRate` is not this: each connection sends its share of a second back to back at the start
 * of the second and then pauses, so 1,000 req/s arrive as one burst of 1,000 per second, and its
 * correction for coordinated omission then adds synthetic samples at 1 ms intervals.
 */
import { Agent, request } from "node:http"

/** What one steady run measured. */
export interface SteadyResult {
  /** Requests sent (rate × seconds). */
  readonly sent: number
  /** Answers with a 2xx status. */
  readonly ok: number
  /** Other statuses, connection errors and timeouts. */
  readonly failed: number
  /** Latency percentiles, ms from when each request was due to its last byte. */
  readonly p50: number
  readonly p99: number
  readonly p999: number
  readonly max: number
  /** The generator's own worst lateness in sending (ms): above a few ms the client, not the server, was the limit. */
  readonly sendLagMax: number
}

export interface SteadyOptions {
  readonly url: string
  readonly method?: "GET" | "POST"
  readonly headers?: Record<string, string>
  readonly body?: string
  /** Requests per second. */
  readonly rate: number
  /** Keep-alive connections at most (requests beyond them wait for one, their wait counted). */
  readonly connections: number
  readonly seconds: number
  /** Ms after which an unanswered request counts as failed. */
  readonly timeoutMs?: number
}

/** Exact percentile (nearest rank) of ascending values. */
const percentile = (sorted: Float64Array, q: number) => sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!

/** Sends `rate` requests per second for `seconds`, evenly spaced, and measures each from when it was due. */
export const steadyLoad = async (options: SteadyOptions): Promise<SteadyResult> => {
  const { rate, seconds } = options
  const total = Math.round(rate * seconds)
  const agent = new Agent({ keepAlive: true, maxSockets: options.connections })
  const url = new URL(options.url)
  const body = options.body === undefined ? undefined : Buffer.from(options.body)
  const headers = { ...options.headers, ...(body === undefined ? {} : { "content-length": String(body.length) }) }
  const latencies = new Float64Array(total)
  let ok = 0
  let failed = 0
  let answered = 0
  let sendLagMax = 0
  let finish: () => void = () => {}
  const allAnswered = new Promise<void>((resolve) => finish = resolve)
  const settle = (i: number, due: number, success: boolean) => {
    latencies[i] = performance.now() - due
    if (success) ok++
    else failed++
    if (++answered === total) finish()
  }
  const send = (i: number, due: number) => {
    let settled = false
    const once = (success: boolean) => {
      if (settled) return
      settled = true
      settle(i, due, success)
    }
    const req = request({ agent, host: url.hostname, port: url.port, path: url.pathname, method: options.method ?? "GET", headers, timeout: options.timeoutMs ?? 30_000 }, (res) => {
      res.on("data", () => {})
      res.on("end", () => once(res.statusCode !== undefined && res.statusCode >= 200 && res.statusCode < 300))
      res.on("error", () => once(false))
    })
    req.on("timeout", () => req.destroy(new Error("timeout")))
    req.on("error", () => once(false))
    req.end(body)
  }
  const t0 = performance.now()
  let next = 0
  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = performance.now()
      const due = Math.min(total, Math.floor(((now - t0) * rate) / 1000) + 1)
      for (; next < due; next++) {
        const at = t0 + (next * 1000) / rate
        sendLagMax = Math.max(sendLagMax, now - at)
        send(next, at)
      }
      if (next < total) setTimeout(tick, 1)
      else resolve()
    }
    tick()
  })
  if (total > 0) await allAnswered
  agent.destroy()
  latencies.sort()
  return {
    sent: total,
    ok,
    failed,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    p999: percentile(latencies, 0.999),
    max: latencies[latencies.length - 1] ?? Number.NaN,
    sendLagMax
  }
}
