/** What `bench:http` prints: the ratio table with each round's ratios, and the fixed-rate latency table. */
import { describe, expect, it } from "vitest"
import { type BenchRow, formatFixedRateBench, formatHttpBench } from "../../bench/http.ts"

const row = (name: string, reqPerSec: number, cpuMicrosPerRequest: number): BenchRow => ({ name, reqPerSec, p50: 1, p99: 2, non2xx: 0, errors: 0, cpuMicrosPerRequest })

describe("bench:http's printout", () => {
  it("the service beside the bare server: each row, the median ratio and every round's ratio", () => {
    const text = formatHttpBench({
      rows: [row("bare GET", 50_000, 19), row("service GET", 33_000, 30), row("bare POST", 68_000, 14), row("service POST", 18_000, 57)],
      roundRatios: { catalog: [0.66, 0.67, 0.68], charged: [0.26, 0.27, 0.28] },
      ledgerRows: 1,
      connections: 50,
      seconds: 8,
      rounds: 3
    })
    const lines = text.split("\n")
    expect(lines).toContain("| bare POST | 68,000 | 1 | 2 | 14.0 | 1.00 (baseline) | 0 |")
    expect(lines).toContain("| service POST | 18,000 | 1 | 2 | 57.0 | 0.27 | 0 |")
    expect(lines).toContain("| service GET | 33,000 | 1 | 2 | 30.0 | 0.67 | 0 |")
    expect(lines.at(-1)).toBe("Ratio to bare by round: catalog 0.66, 0.67, 0.68; charged POST 0.26, 0.27, 0.28.")
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
  })
})
