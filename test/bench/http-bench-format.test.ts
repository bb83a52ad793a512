/**
 * `bench:http` prints issue 18's figures from before the work beside its own (the issue's
 * acceptance: "side by side with today's baseline where one applies").
 */
import { describe, expect, it } from "vitest"
import { type BenchRow, formatFixedRateBench, formatHttpBench } from "../../bench/http.ts"

const row = (name: string, reqPerSec: number, cpuMicrosPerRequest: number): BenchRow => ({ name, reqPerSec, p50: 1, p99: 2, non2xx: 0, errors: 0, cpuMicrosPerRequest })

describe("bench:http's printout", () => {
  it("puts the request path's baseline and goal under the ratio table", () => {
    const text = formatHttpBench({
      rows: [row("bare GET", 50_000, 19), row("service GET", 33_000, 30), row("bare POST", 68_000, 14), row("service POST", 18_000, 57)],
      roundRatios: { catalog: [0.66, 0.67, 0.68], charged: [0.26, 0.27, 0.28] },
      ledgerRows: 1,
      connections: 50,
      seconds: 8,
      rounds: 3
    })
    const lines = text.split("\n")
    const table = lines.findIndex((l) => l.startsWith("| service POST"))
    const baseline = lines.findIndex((l) => l.startsWith("Issue 18 baseline"))
    expect(table).toBeGreaterThan(0)
    expect(baseline).toBeGreaterThan(table)
    expect(lines[baseline]).toContain("≈ 110 µs")
    expect(lines[baseline]).toContain("ratio 0.18")
    expect(lines[baseline]).toContain("catalog ratio 0.25")
    expect(lines[baseline]).toContain("charged POST ≥ 0.35, catalog ≥ 0.5")
    expect(lines[table]).toContain("| 0.27 |")
  })

  it("puts the fixed-rate baseline and goal under the latency table", () => {
    const text = formatFixedRateBench({
      rows: [{ name: "POST /v1/temporal", sent: 8000, ok: 8000, failed: 0, p50: 1.2, p99: 6.5, p999: 12.3, max: 20.1, sendLagMax: 3 }],
      rate: 1000,
      connections: 50,
      seconds: 8,
      patients: 50_000,
      threads: 0
    })
    expect(text).toContain("| POST /v1/temporal | 8,000 | 1.20 | 6.50 | 12.3 | 20.1 | 0 | 3.00 |")
    expect(text.split("\n").at(-1)).toBe(
      "Issue 18 baseline (before the work, this machine, 0 compute threads): p99 14–25 ms for temporal, risk-model, one-health and the repeated population question, p99.9 33–97 ms. Goal: p99 ≤ 10 ms for every endpoint."
    )
  })
})
