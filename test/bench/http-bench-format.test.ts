/** What `bench:http` prints: the ratio table with each round's ratios, and the fixed-rate latency table. */
import { describe, expect, it } from "vitest"
import { type BenchRow, formatFixedRateBench, formatHttpBench } from "../../bench/http.ts"

const row = (name: string, reqPerSec: number, cpuMicrosPerRequest: number): BenchRow => ({ name, reqPerSec, p50: 1, p99: 2, non2xx: 0, errors: 0, cpuMicrosPerRequest })

describe("bench:http's printout", () => {
  it("the service beside the bare server: each row, the median ratio and every round's ratio", () => {
    const text = formatHttpBench({
      catalog: { rows: [row("bare GET", 50_000, 19), row("service GET", 33_000, 30)], toBare: [[1, 1, 1], [0.66, 0.67, 0.68]], toBaseline: undefined },
      charged: { rows: [row("bare POST", 68_000, 14), row("service POST", 18_000, 57)], toBare: [[1, 1, 1], [0.26, 0.27, 0.28]], toBaseline: undefined },
      ledgerRows: 1,
      connections: 50,
      seconds: 8,
      rounds: 3,
      fixedRate: undefined,
      baseline: undefined
    })
    const lines = text.split("\n")
    expect(lines).toContain("| bare POST | 68,000 | 1 | 2 | 14.0 | 1.00 (baseline) | 0 |")
    expect(lines).toContain("| service POST | 18,000 | 1 | 2 | 57.0 | 0.27 | 0 |")
    expect(lines).toContain("| service GET | 33,000 | 1 | 2 | 30.0 | 0.67 | 0 |")
    expect(lines.at(-1)).toBe("Ratio to bare by round: catalog 0.66, 0.67, 0.68; charged POST 0.26, 0.27, 0.28.")
  })

  it("with another checkout as the baseline: its rows and this service's ratio to it, round by round", () => {
    const text = formatHttpBench({
      catalog: { rows: [row("bare GET", 50_000, 19), row("service GET", 33_000, 30), row("baseline GET", 30_000, 33)], toBare: [[1, 1, 1], [0.66, 0.67, 0.68], [0.6, 0.6, 0.6]], toBaseline: [1.1, 1.12, 1.08] },
      charged: { rows: [row("bare POST", 68_000, 14), row("service POST", 18_000, 57), row("baseline POST", 18_500, 56)], toBare: [[1, 1, 1], [0.26, 0.27, 0.28], [0.27, 0.27, 0.27]], toBaseline: [0.97, 0.99, 1.01] },
      ledgerRows: 1,
      connections: 50,
      seconds: 8,
      rounds: 3,
      fixedRate: { rate: 3000, connections: 20, catalog: [[184, 238, 180], [186, 146, 214]], charged: [[282, 336, 327], [304, 311, 343]] },
      baseline: "../before"
    })
    const lines = text.split("\n")
    expect(lines[0]).toContain("baseline: the checkout at ../before")
    expect(lines).toContain("| service POST | 18,000 | 1 | 2 | 57.0 | 0.27 | 0.99 | 0 |")
    expect(lines).toContain("| baseline GET | 30,000 | 1 | 2 | 33.0 | 0.60 | 1.00 | 0 |")
    expect(lines).toContain("Ratio to bare by round: catalog 0.66, 0.67, 0.68; charged POST 0.26, 0.27, 0.28. Ratio to baseline by round: catalog 1.10, 1.12, 1.08; charged POST 0.97, 0.99, 1.01.")
    expect(lines).toContain("| GET /v1/catalog | 184 (184, 238, 180) | 186 (186, 146, 214) | 0.99 |")
    expect(lines.at(-1)).toBe("| POST /v1/series-stats | 327 (282, 336, 327) | 311 (304, 311, 343) | 1.05 |")
  })

  it("the fixed-rate latencies, one row per endpoint", () => {
    const text = formatFixedRateBench({
      rows: [{ name: "POST /v1/temporal", sent: 8000, ok: 8000, failed: 0, p50: 1.2, p99: 6.5, p999: 12.3, max: 20.1, sendLagMax: 3 }],
      rate: 1000,
      connections: 50,
      seconds: 8,
      patients: 50_000,
      threads: 0
    })
    expect(text.split("\n").at(-1)).toBe("| POST /v1/temporal | 8,000 | 1.20 | 6.50 | 12.3 | 20.1 | 0 | 3.00 |")
    expect(text).toContain("1000 req/s")
    expect(text).not.toContain("baseline")
  })

  it("the fixed-rate latencies beside another checkout: its rows marked, the checkout named", () => {
    const row = { sent: 8000, ok: 8000, failed: 0, p50: 1.2, p99: 6.5, p999: 12.3, max: 20.1, sendLagMax: 3 }
    const text = formatFixedRateBench({
      rows: [{ name: "POST /v1/temporal", ...row }, { name: "POST /v1/temporal (baseline)", ...row, p99: 45 }],
      rate: 1000,
      connections: 50,
      seconds: 8,
      patients: 50_000,
      threads: 2,
      baseline: "../before"
    })
    const lines = text.split("\n")
    expect(lines[0]).toContain("(baseline): the checkout at ../before")
    expect(lines.at(-1)).toBe("| POST /v1/temporal (baseline) | 8,000 | 1.20 | 45.0 | 12.3 | 20.1 | 0 | 3.00 |")
  })
})
