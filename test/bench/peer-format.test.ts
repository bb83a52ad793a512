/**
 * bench:peer's table: DuckDB beside the service, and with `--baseline` the other checkout's cold
 * and warm medians beside this one's, each ratio of the right pair.
 */
import { describe, expect, it } from "vitest"
import { formatPeerBench } from "../../bench/peer.ts"

const result = (baseline: boolean) => ({
  preps: [{ patients: 50_000, generateSeconds: 30.5, exportSeconds: 9.3, parquetSeconds: 0.9, parquetMiB: 40, csvMiB: 300 }],
  rows: [{
    patients: 50_000,
    question: "drug-outcomes" as const,
    service: { cold: [20, 10, 30], warm: [5, 6, 7] },
    ...(baseline ? { baseline: { cold: [40, 35, 30], warm: [6, 6, 6] } } : {}),
    duckdb: { cold: [16, 18, 19], warm: [14, 15, 16] },
    checked: "cohort 3,785, adverse-event rate 0.0845"
  }]
})

describe("bench:peer's table", () => {
  it("the service beside DuckDB: medians of the rounds and DuckDB's ratio", () => {
    const lines = formatPeerBench(result(false)).split("\n")
    expect(lines).toContain("| 50,000 | 30.5 | 9.3 | 300 | 0.9 | 40 |")
    expect(lines.at(-1)).toBe("| 50,000 | drug-outcomes | 20.0 | 18.0 | 0.9× | 6.0 | 15.0 | 2.5× | cohort 3,785, adverse-event rate 0.0845 |")
    expect(lines.join("\n")).not.toContain("baseline")
  })

  it("with a baseline checkout: its medians and its ratio to this one's, cold and warm", () => {
    const lines = formatPeerBench(result(true), "/tmp/before").split("\n")
    expect(lines).toContain("Baseline: the checkout at /tmp/before, in the same rounds; baseline ÷ service: how many times longer it takes.")
    expect(lines.at(-3)).toBe("| patients | question | service cold | baseline cold | baseline ÷ service | DuckDB cold | DuckDB ÷ service | service warm | baseline warm | baseline ÷ service | DuckDB warm | DuckDB ÷ service | checked equal |")
    expect(lines.at(-1)).toBe("| 50,000 | drug-outcomes | 20.0 | 35.0 | 1.8× | 18.0 | 0.9× | 6.0 | 6.0 | 1.0× | 15.0 | 2.5× | cohort 3,785, adverse-event rate 0.0845 |")
  })
})
