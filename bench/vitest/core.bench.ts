/**
 * The compute core as `vitest bench` files (`npm run bench:vitest`; Vitest 5's `bench` fixture):
 * each kernel family, WASM and its TypeScript twin compared in one table, through the package's
 * `./core` entry as a harness would use it. Nothing is asserted about time. docs/core.md explains
 * the workloads; `npm run bench:core` adds the native C column.
 */
import { test } from "vitest"
import { loadCore, twins } from "../../src/core/index.ts"

const lcg = (seed: number) => {
  let s = seed >>> 0
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0
    return s / 2 ** 32
  }
}
const series = (count: number, n: number, seed: number) => {
  const rnd = lcg(seed)
  const out = new Float64Array(count * n)
  for (let s = 0; s < count; s++) {
    let x = 3 + 6 * rnd()
    for (let t = 0; t < n; t++) {
      x = Math.min(10, Math.max(0, x + (rnd() - 0.55) * 0.6))
      out[s * n + t] = rnd() < 0.03 && t > 0 ? Number.NaN : x
    }
  }
  return out
}

const wasm = loadCore()
const n = 36
const patients = 500
const axes = series(patients * 8, n, 1)
const all8 = Int32Array.from([0, 1, 2, 3, 4, 5, 6, 7])

const OPTIONS = { time: 1000 }

test("correlationMatrix: 500 patients × 8 axes × 36 months, all 28 pairs", async ({ bench }) => {
  await bench.compare(
    bench("wasm", () => void wasm.correlationMatrix(axes, patients, 8, n)),
    bench("twin", () => void twins.correlationMatrix(axes, patients, 8, n)),
    OPTIONS
  )
})

test("laggedXcorr: 500 pairs × 104 weeks, lags 0–8", async ({ bench }) => {
  const xs = series(500, 104, 2)
  const ys = series(500, 104, 3)
  await bench.compare(
    bench("wasm", () => void wasm.laggedXcorr(xs, ys, 500, 104, 8)),
    bench("twin", () => void twins.laggedXcorr(xs, ys, 500, 104, 8)),
    OPTIONS
  )
})

test("evaluateRules: 500 patients × 8 axes × 36 months, 28 rules", async ({ bench }) => {
  await bench.compare(
    bench("wasm", () => void wasm.evaluateRules(axes, patients, 8, n, all8)),
    bench("twin", () => void twins.evaluateRules(axes, patients, 8, n, all8)),
    OPTIONS
  )
})

test("fitTrajectories: 200 series × 36 points, 5 models", async ({ bench }) => {
  const data = axes.subarray(0, 200 * n)
  await bench.compare(
    bench("wasm", () => void wasm.fitTrajectories(data, 200, n, 6)),
    bench("twin", () => void twins.fitTrajectories(data, 200, n, 6)),
    OPTIONS
  )
})

test("axis panel: 20,000 patients × 8 axes × 36 months, mean mask + quarterly trend", async ({ bench }) => {
  const nPatients = 20_000
  const data = Float32Array.from(series(nPatients * 8, n, 5))
  const cohort = new Uint8Array(nPatients).fill(1)
  const quarter = Int32Array.from({ length: n }, (_, m) => Math.floor(m / 3))
  const wp = wasm.panel(data, nPatients, 8, n)
  const tp = twins.panel(data, nPatients, 8, n)
  await bench.compare(
    bench("wasm", () => void wasm.panelTrend(wp, all8, 0, n, quarter, 12, wasm.panelMeanMask(wp, 0, 0, n, 5, 10, cohort))),
    bench("twin", () => void twins.panelTrend(tp, all8, 0, n, quarter, 12, twins.panelMeanMask(tp, 0, 0, n, 5, 10, cohort))),
    OPTIONS
  )
})
