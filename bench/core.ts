/**
 * `npm run bench:core`: every kernel family of the WASM core against its TypeScript twin on the
 * same batch inputs, in one run; prints the median time of each and the ratio (twin ÷ WASM). The
 * correlation and axis-panel families also run as C (bench/native/kernels.c, the same algorithms,
 * gcc -O3 -march=native) on the same inputs, when gcc is present; the table says so when it is not.
 * WASM timings include copying the batch in and the results out, as the service does; cohort
 * columns are made resident once (as the dataset is at start-up) and are not timed.
 *
 * `runCoreBench` is exported for test harnesses; this file is also the CLI.
 */
import * as Effect from "effect/Effect"
import { execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { performance } from "node:perf_hooks"
import { Arena } from "../src/kernels/Arena.ts"
import { type KernelsService, makeWasm, reference } from "../src/kernels/Kernels.ts"
import { instantiateCore } from "../src/kernels/WasmModule.ts"
import { contract as temporalContract } from "../plugins/temporal/contract.ts"

/** One measured kernel family. */
export interface CoreBenchRow {
  readonly family: string
  readonly workload: string
  readonly wasmMs: number
  readonly twinMs: number
  /** twin ÷ WASM: how many times faster the WASM core is. */
  readonly ratio: number
  readonly target: number
  /** The C build's median on the same input, when measured. */
  readonly nativeMs?: number | undefined
}

const ROOT = resolve(import.meta.dirname, "..")
const NATIVE_SOURCE = join(ROOT, "bench/native/kernels.c")
const NATIVE_BINARY = join(ROOT, "build/bench-native-kernels")

/** Builds the C kernels (again when the source is newer); a reason when it cannot. */
export const buildNative = (): { readonly binary: string } | { readonly skipped: string } => {
  try {
    execFileSync("gcc", ["--version"], { stdio: "ignore" })
  } catch {
    return { skipped: "gcc not found: the native C column is skipped (install gcc to measure it)" }
  }
  const stale = (() => {
    try {
      return statSync(NATIVE_BINARY).mtimeMs < statSync(NATIVE_SOURCE).mtimeMs
    } catch {
      return true
    }
  })()
  if (stale) {
    mkdirSync(join(ROOT, "build"), { recursive: true })
    execFileSync("gcc", ["-O3", "-march=native", "-o", NATIVE_BINARY, NATIVE_SOURCE, "-lm"], { stdio: "inherit" })
  }
  return { binary: NATIVE_BINARY }
}

/** Runs the C build on inputs written to files; its JSON answer (median ms and results to compare). */
const runNative = (binary: string, args: ReadonlyArray<string>, files: ReadonlyArray<readonly [string, ArrayBufferView]>): Record<string, any> => {
  const dir = mkdtempSync(join(tmpdir(), "hcc-native-"))
  try {
    const paths = files.map(([name, data]) => {
      const path = join(dir, name)
      writeFileSync(path, new Uint8Array(data.buffer, data.byteOffset, data.byteLength))
      return path
    })
    return JSON.parse(execFileSync(binary, [args[0]!, ...paths, ...args.slice(1)], { encoding: "utf8" })) as Record<string, any>
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** Deterministic pseudo-random numbers (LCG), so every run measures the same inputs. */
const lcg = (seed: number) => {
  let s = seed >>> 0
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0
    return s / 2 ** 32
  }
}

/** `count` axis series of `n` points in [0, 10]: random walks with a drift, 3 % gaps. */
const makeSeries = (count: number, n: number, seed: number): Float64Array => {
  const rnd = lcg(seed)
  const out = new Float64Array(count * n)
  for (let s = 0; s < count; s++) {
    let x = 3 + 6 * rnd()
    const drift = (rnd() - 0.6) * 0.15
    for (let t = 0; t < n; t++) {
      x = Math.min(10, Math.max(0, x + drift + (rnd() - 0.5) * 0.6))
      out[s * n + t] = rnd() < 0.03 && t > 0 ? NaN : x
    }
  }
  return out
}

const median = (xs: Array<number>) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[s.length >> 1]!
}

/** Times `f` for each implementation, alternating, `reps` times; returns the medians in ms. */
const race = (reps: number, f: (k: KernelsService) => unknown, wasm: KernelsService): { wasmMs: number; twinMs: number } => {
  f(wasm)
  f(reference) // warm both (JIT, memory growth)
  const w: Array<number> = []
  const t: Array<number> = []
  for (let i = 0; i < reps; i++) {
    let t0 = performance.now()
    f(wasm)
    w.push(performance.now() - t0)
    t0 = performance.now()
    f(reference)
    t.push(performance.now() - t0)
  }
  return { wasmMs: median(w), twinMs: median(t) }
}

/** Runs every family; `scale` multiplies the batch sizes (1 = the documented workloads). */
export const runCoreBench = (options: { readonly scale?: number; readonly reps?: number; readonly native?: boolean } = {}): ReadonlyArray<CoreBenchRow> => {
  const scale = options.scale ?? 1
  const reps = options.reps ?? 7
  const wasm = makeWasm(new Arena(instantiateCore()))
  const run = <A>(e: Effect.Effect<A, unknown>) => Effect.runSync(e)
  const n = 36
  const patients = Math.round(1250 * scale) // × 8 axes = 10,000 series
  const axes8 = makeSeries(patients * 8, n, 1)
  const rows: Array<CoreBenchRow> = []
  const add = (family: string, workload: string, target: number, r: { wasmMs: number; twinMs: number }, nativeMs?: number) =>
    rows.push({ family, workload, target, ...r, ratio: r.twinMs / r.wasmMs, nativeMs })
  const native = options.native === false ? { skipped: "native column not asked for" } : buildNative()
  if ("skipped" in native) console.error(native.skipped)
  /** The C build's time, after checking that it computes what the WASM core computes. */
  const nativeMs = (args: ReadonlyArray<string>, files: ReadonlyArray<readonly [string, ArrayBufferView]>, check: (answer: Record<string, any>) => void) => {
    if ("skipped" in native) return undefined
    const answer = runNative(native.binary, args, files)
    check(answer)
    return answer.ms as number
  }
  const agree = (what: string, c: number, w: number) => {
    if (!(Math.abs(c - w) <= 1e-9 * Math.max(1, Math.abs(w))) && !(Number.isNaN(c) && Number.isNaN(w))) throw new Error(`native ${what} ${c} ≠ WASM ${w}`)
  }

  const corr = run(wasm.correlationMatrix(axes8, patients, 8, n))
  add("correlation", `${patients * 8} series × ${n} points: Pearson + Spearman of all 28 axis pairs of ${patients} patients`, 3,
    race(reps, (k) => run(k.correlationMatrix(axes8, patients, 8, n)), wasm),
    nativeMs(["correlation", String(patients), "8", String(n), String(reps)], [["data.f64", axes8]], (a) => {
      const last = corr.pearson.length - 1
      agree("pearson[0]", a.pearson[0], corr.pearson[0]!)
      agree("pearson[last]", a.pearson[2], corr.pearson[last]!)
      agree("spearman[last]", a.spearman[2], corr.spearman[last]!)
    }))

  const pairs = Math.round(2000 * scale)
  const weeks = 104
  const xs = makeSeries(pairs, weeks, 2)
  const ys = makeSeries(pairs, weeks, 3)
  add("lagged correlation", `${pairs} pairs × ${weeks} weeks, lags 0–8`, 3, race(reps, (k) => run(k.laggedXcorr(xs, ys, pairs, weeks, 8)), wasm))

  add("decay rules", `${patients} patients × 8 axes × ${n} points, 28 rules`, 2,
    race(reps, (k) => run(k.evaluateRules(axes8, patients, 8, n, Int32Array.from([0, 1, 2, 3, 4, 5, 6, 7]))), wasm))

  const fitSeries = Math.round(2000 * scale)
  const fitData = axes8.subarray(0, fitSeries * n)
  add("trajectory fits", `${fitSeries} series × ${n} points, 5 models + AICc + 6-step prediction`, 2,
    race(Math.max(5, reps >> 1), (k) => run(k.fitTrajectories(fitData, fitSeries, n, 6)), wasm))

  // The README's temporal question (the plugin's example): a few hundred microseconds, so many repeats.
  const example = temporalContract.examples![0]!.request as { readonly patient_axes: Readonly<Record<string, ReadonlyArray<number>>>; readonly predict_ahead: number }
  const exampleAxes = Object.values(example.patient_axes)
  const examplePoints = exampleAxes[0]!.length
  const exampleData = Float64Array.from(exampleAxes.flat())
  add("trajectory fits", `the README's temporal question: ${exampleAxes.length} axes × ${examplePoints} points, ${example.predict_ahead} ahead`, 2,
    race(Math.max(51, reps * 15), (k) => run(k.fitTrajectories(exampleData, exampleAxes.length, examplePoints, example.predict_ahead)), wasm))

  // Cohort scans over resident columns: 500,000 monthly rows (≈ 50k patients × 10 months).
  const rowsN = Math.round(500_000 * scale)
  const rnd = lcg(4)
  const age = Float64Array.from({ length: rowsN }, () => Math.floor(rnd() * 90))
  const region = Int32Array.from({ length: rowsN }, () => Math.floor(rnd() * 8))
  const period = Int32Array.from({ length: rowsN }, () => Math.floor(rnd() * 40))
  const score = Float64Array.from({ length: rowsN }, () => (rnd() < 0.05 ? NaN : rnd() * 10))
  const all = new Uint8Array(rowsN).fill(1)
  const regions = Uint8Array.from([1, 0, 1, 0, 0, 1, 0, 0])
  const cols = (k: KernelsService) => ({
    age: run(k.columnF64(age)),
    region: run(k.columnI32(region)),
    period: run(k.columnI32(period)),
    score: run(k.columnF64(score))
  })
  const wc = cols(wasm)
  const rc = cols(reference)
  const colsOf = (k: KernelsService) => (k === wasm ? wc : rc)
  add("cohort scans", `${rowsN.toLocaleString("en-US")} rows: age range ∧ region set → count → means by 40 periods → quartiles`, 3,
    race(reps, (k) => {
      const c = colsOf(k)
      const m1 = run(k.maskRange(c.age, 45, 64, all))
      const m2 = run(k.maskInSet(c.region, regions, m1))
      run(k.maskCount(m2))
      run(k.groupStats(c.period, c.score, m2, 40))
      return run(k.quantiles(c.score, m2, [0.25, 0.5, 0.75]))
    }, wasm))

  // The axis panel as the population endpoint scans it: 50,000 patients × 8 axes × 36 months (f32),
  // a mean-score threshold on PO, then per-quarter sums and per-patient slopes of all 8 axes.
  const panelPatients = Math.round(50_000 * scale)
  const panelData = Float32Array.from(makeSeries(panelPatients * 8, n, 5))
  const cohortMask = Uint8Array.from({ length: panelPatients }, () => (rnd() < 0.3 ? 1 : 0))
  const quarter = Int32Array.from({ length: n }, (_, m) => Math.floor(m / 3))
  const panels = new Map([wasm, reference].map((k) => [k, run(k.panel(panelData, panelPatients, 8, n))] as const))
  const scanPanel = (k: KernelsService) => {
    const panel = panels.get(k)!
    const m = run(k.panelMeanMask(panel, 0, 0, n, 5, 10, cohortMask))
    return run(k.panelTrend(panel, Int32Array.from([0, 1, 2, 3, 4, 5, 6, 7]), 0, n, quarter, 12, m))
  }
  const trend = scanPanel(wasm)
  add("axis panel", `${panelPatients.toLocaleString("en-US")} patients × 8 axes × ${n} months: PO mean ≥ 5 → 12 quarter means + per-patient slopes of 8 axes`, 2,
    race(reps, scanPanel, wasm),
    nativeMs(["panel", String(panelPatients), String(n), String(reps)], [["panel.f32", panelData], ["mask.u8", cohortMask]], (a) => {
      agree("count[0]", a.count[0], trend.count[0]!)
      agree("sum[95]", a.sum[1], trend.sum[95]!)
      agree("slope n", a.slope[0], trend.slope[0]!)
      agree("slope Σ", a.slope[1], trend.slope[1]!)
    }))

  // The risk model's fit: a Poisson GLM with exposure offsets over 50,000 patients × 20 features
  // (intercept, age, 10 condition flags, 8 axis means), as fitted once per risk type at load.
  const glmRows = Math.round(50_000 * scale)
  const p = 20
  const design = Float64Array.from({ length: glmRows * p }, (_, i) => (i % p === 0 ? 1 : i % p < 12 && i % p > 1 ? (rnd() < 0.15 ? 1 : 0) : rnd() * 2 - 1))
  const events = Float64Array.from({ length: glmRows }, () => (rnd() < 0.12 ? 1 : 0) + (rnd() < 0.03 ? 1 : 0))
  const exposure = Float64Array.from({ length: glmRows }, () => Math.log(1 + 2 * rnd()))
  add("GLM fit", `${glmRows.toLocaleString("en-US")} rows × ${p} features, Poisson IRLS to convergence + covariance`, 2,
    race(Math.max(5, reps >> 1), (k) => run(k.fitGlm(design, events, exposure, glmRows, p, "poisson")), wasm))
  return rows
}

/** The table printed by the CLI and pasted into docs/benchmarks.md. */
export const formatCoreBench = (rows: ReadonlyArray<CoreBenchRow>): string =>
  [
    "| family | workload | WASM median ms | TS twin median ms | native C median ms | ratio (twin ÷ WASM) | WASM ÷ native | target |",
    "|---|---|---|---|---|---|---|---|",
    ...rows.map((r) =>
      `| ${r.family} | ${r.workload} | ${r.wasmMs.toFixed(2)} | ${r.twinMs.toFixed(2)} | ${r.nativeMs === undefined ? "–" : r.nativeMs.toFixed(2)} | ${r.ratio.toFixed(2)}× | ${
        r.nativeMs === undefined ? "–" : `${(r.wasmMs / r.nativeMs).toFixed(2)}×`
      } | ≥ ${r.target}× ${r.ratio >= r.target ? "✓" : "✗"} |`
    )
  ].join("\n")

if (import.meta.main) {
  const scale = Number(process.argv[2] ?? 1)
  console.log(`node ${process.version}; medians of alternating runs\n`)
  console.log(formatCoreBench(runCoreBench({ scale })))
}
