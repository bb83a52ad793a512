/**
 * The evidence behind a clinical answer, computed from the dataset and the knowledge base: the
 * similar patients (those with a course of every named drug and every named condition), their
 * encounters in the window, each named axis's level and within-patient trend against all patients,
 * the interactions of the named drugs, the drugs' adverse events among the similar patients, and
 * the correlations of the requested axes. Cohort scans, window statistics and correlations run in
 * the WASM core. Definitions: docs/analytics.md#clinical.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { atLeast, atMost, AXES, type Axis, below, firstDayOfMonth, formatDate, formatMonth, oneSampleTP, pairKey, studentTwoSidedP, type TIME_RANGES } from "../../src/plugin/Plugin.ts"
import { type Dataset, datasetCache, type HealthDataService, type KernelsService, membersOf, primed } from "../../src/plugin/experimental.ts"
import knowledge from "./interactions.json" with { type: "json" }
import type { Direction, Understanding } from "./understand.ts"

/** A time range of the catalog. */
export type TimeRange = (typeof TIME_RANGES)[number]

/**
 * Fewer similar patients than this give no data evidence (the CMS small-cell rule), whatever the
 * service's minimum cell size; a larger minimum raises it.
 */
export const MIN_SIMILAR = 11
/** A cohort's mean within-patient slope is a trend when p < 0.05 and |slope| ≥ this (points per month). */
export const TREND_SLOPE = 0.01
/** Months each time range covers, counting back from as_of's month. */
export const TIME_RANGE_MONTHS: Readonly<Record<Exclude<TimeRange, "all">, number>> = { "30_days": 1, "90_days": 3, "6_months": 6, "1_year": 12 }

/** One interaction of the knowledge base (interactions.json, checked when the module loads). */
const InteractionSchema = Schema.Struct({
  drugs: Schema.Tuple([Schema.String, Schema.String]).check(
    Schema.makeFilter((d: readonly [string, string]) => d[0] < d[1] || "Expected the two drugs in alphabetical order")
  ),
  severity: Schema.Literals(["major", "moderate", "minor"]),
  mechanism: Schema.NonEmptyString,
  monitoring: Schema.NonEmptyString,
  source: Schema.NonEmptyString,
  url: Schema.String.check(Schema.isStartingWith("https://"))
})
export type Interaction = typeof InteractionSchema.Type
/** The curated interactions. */
export const INTERACTIONS: ReadonlyArray<Interaction> = Schema.decodeUnknownSync(Schema.Array(InteractionSchema))(knowledge.interactions)

/** The months the evidence covers: panel months [from, to) and their dates. */
export interface Window {
  readonly from: number
  readonly to: number
  readonly firstDay: string
  readonly lastDay: string
  readonly firstMonth: string
  readonly lastMonth: string
  /** Where its length came from. */
  readonly basis: "time_range" | "query" | "all"
  readonly label: string
}

/** The window of a request: the time_range if given, else a duration in the query, else all months. */
export const evidenceWindow = (data: Dataset, timeRange: TimeRange | undefined, u: Understanding): Window => {
  const to = data.months
  let months = to
  let basis: Window["basis"] = "all"
  let label = "all"
  if (timeRange !== undefined && timeRange !== "all") {
    months = TIME_RANGE_MONTHS[timeRange]
    basis = "time_range"
    label = timeRange
  } else if (timeRange === undefined && u.durationDays !== undefined) {
    months = Math.ceil(u.durationDays / 30.4375)
    basis = "query"
    label = u.durationText!
  } else if (timeRange === "all") basis = "time_range"
  const from = Math.max(0, to - Math.max(1, months))
  return {
    from,
    to,
    firstDay: formatDate(firstDayOfMonth(data.firstMonth + from)),
    lastDay: data.asOf,
    firstMonth: formatMonth(data.firstMonth + from),
    lastMonth: formatMonth(data.firstMonth + to - 1),
    basis,
    label
  }
}

/** A named axis in the similar patients and in all patients over the window. */
export interface AxisEvidence {
  readonly axis: Axis
  /** Mean of the patients' mean scores (NaN without scores), and how many patients have a score. */
  readonly level: number
  readonly scored: number
  readonly populationLevel: number
  /** Patients with at least 3 scores in the window (a slope), and how many of them decline. */
  readonly n: number
  readonly negative: number
  /** Mean within-patient least-squares slope, points per month, its 95 % half-width and p. */
  readonly slope: number
  readonly halfWidth: number
  readonly p: number
  readonly populationSlope: number
  /** Share of the patients with a slope whose slope is negative. */
  readonly shareDeclining: number
  readonly populationShareDeclining: number
  /** All patients with a slope, and how many of them decline. */
  readonly populationN: number
  readonly populationNegative: number
  readonly verdict: Direction
  /** Fewer patients with a slope than the minimum cell size (but some): nothing about the axis's trend is published. */
  readonly withheld?: boolean
}

/** Adverse events of a named drug among the similar patients in the window. */
export interface AdverseEvidence {
  readonly drug: string
  readonly event: string
  readonly patients: number
}

/** Everything the answer is built from. */
export interface Evidence {
  readonly window: Window
  readonly population: number
  /** Similar patients (everyone when the query names no drug or condition). */
  readonly similar: number
  /** Whether there are enough similar patients for data evidence, and how many that takes. */
  readonly enough: boolean
  readonly minimumSimilar: number
  readonly everyone: boolean
  readonly encounters: number
  readonly axes: ReadonlyArray<AxisEvidence>
  readonly interactions: ReadonlyArray<{ readonly pair: readonly [string, string]; readonly found: Interaction | undefined }>
  readonly adverse: ReadonlyArray<AdverseEvidence>
  /** `<axis>_<axis>` → Pearson r across the patients' window means, canonical order; who they are. */
  readonly correlations: Readonly<Record<string, number>>
  readonly correlationPatients: number
  readonly correlationOverEveryone: boolean
}

interface WindowStats {
  readonly level: number
  readonly scored: number
  readonly n: number
  readonly sum: number
  readonly sumSq: number
  readonly negative: number
}

// O(patients) loops live in plain functions, not in Effect generators: V8 optimizes a running loop
// (on-stack replacement) only outside a generator, so a fresh server's first questions would run
// them unoptimized.

// Each loop's function ends with its loop (or is primed): src/plugin/hotLoops.ts says why.

/** How many encounters of the masked patients started on or after firstDay (and by as_of). */
const encountersFrom = (data: Dataset, offsets: Int32Array, mask: Uint8Array, firstDay: number): number => {
  const start = data.encounters.startDay
  let encounters = 0
  for (let p = 0; p < data.patients.count; p++) {
    if (mask[p] !== 1) continue
    for (let i = offsets[p]!; i < offsets[p + 1]!; i++) if (start[i]! >= firstDay && start[i]! <= data.asOfDay) encounters++
  }
  return encounters
}

/** Adverse events of the drugs among the masked patients from firstDay to as_of: patients per drug and event type. */
const adverseAmong = (data: Dataset, mask: Uint8Array, drugs: ReadonlyArray<string>, firstDay: number): Array<AdverseEvidence> => {
  const ae = data.adverseEvents
  const seen = new Map<string, Set<number>>()
  for (let i = 0; i < ae.patient.length; i++) {
    const p = ae.patient[i]!
    if (mask[p] !== 1 || ae.day[i]! < firstDay || ae.day[i]! > data.asOfDay) continue
    const drug = data.vocabulary.drug[ae.drug[i]!]!
    if (!drugs.includes(drug)) continue
    const k = `${drug}/${data.vocabulary.adverse_event[ae.eventType[i]!]}`
    if (!seen.has(k)) seen.set(k, new Set())
    seen.get(k)!.add(p)
  }
  const adverse: Array<AdverseEvidence> = []
  for (const drug of drugs) {
    for (const [k, patients] of [...seen].filter(([k]) => k.startsWith(`${drug}/`)).sort()) adverse.push({ drug, event: k.slice(drug.length + 1), patients: patients.size })
  }
  return adverse
}

/**
 * Per-axis level and slope summaries of the masked patients over the window (WASM panelWindowsOf,
 * for those patients only). `raw` holds their window statistics axis-major, patients in index order.
 */
const windowStats = (kernels: KernelsService, data: Dataset, axes: ReadonlyArray<Axis>, mask: Uint8Array, w: Window) =>
  Effect.gen(function*() {
    const members = membersOf(mask)
    const count = members.length
    const r = yield* kernels.panelWindowsOf(data.panel, Int32Array.from(axes, (a) => AXES.indexOf(a)), members, new Int32Array(count).fill(w.from), new Int32Array(count).fill(w.to))
    return { raw: r, count, stats: axes.map((_, k) => axisWindowStats(r.mean, r.slope, k * count, count)) }
  })

/** One axis's summary from its `count` patients' window means and slopes, which start at `at`. */
const axisWindowStats = primed((mean: Float64Array, slope: Float64Array, at: number, count: number): WindowStats => {
  let levelSum = 0
  let levelN = 0
  let cnt = 0
  let sum = 0
  let sumSq = 0
  let negative = 0
  for (let j = at; j < at + count; j++) {
    const m = mean[j]!
    if (!Number.isNaN(m)) {
      levelSum += m
      levelN++
    }
    const s = slope[j]!
    if (Number.isNaN(s)) continue
    cnt++
    sum += s
    sumSq += s * s
    if (below(s, 0)) negative++
  }
  return { level: levelN === 0 ? Number.NaN : levelSum / levelN, scored: levelN, n: cnt, sum, sumSq, negative }
}, Float64Array.of(1), Float64Array.of(-0.5), 0, 1)

/** Student t quantile of a 95 % interval with df degrees of freedom, by bisection on the two-sided p. */
const t95 = (df: number) => {
  let lo = 1.9
  let hi = 13
  for (let i = 0; i < 60; i++) {
    const mid = (lo + hi) / 2
    if (studentTwoSidedP(mid, df) > 0.05) lo = mid
    else hi = mid
  }
  return (lo + hi) / 2
}

/** Everyone's window statistics per axes and window (the same for every question over them). */
const everyoneStats = datasetCache<ReadonlyArray<WindowStats>>(256)

/** Where each patient's encounters start in the (patient-ordered) encounter columns: n + 1 offsets. */
export const encounterOffsets = (data: Dataset): Int32Array => {
  const offsets = new Int32Array(data.patients.count + 1)
  for (const p of data.encounters.patient) offsets[p + 1]!++
  for (let p = 0; p < data.patients.count; p++) offsets[p + 1]! += offsets[p]!
  return offsets
}

/** The verdict on a mean slope (points per month) and its p-value: ±TREND_SLOPE with p < 0.05 (docs/analytics.md, Clinical). */
export const verdictOf = (slope: number, p: number): Direction =>
  p < 0.05 && atLeast(slope, TREND_SLOPE) ? "improving" : p < 0.05 && atMost(slope, -TREND_SLOPE) ? "declining" : "stable"

/** Computes the evidence for an understood query over the requested axes and window. */
export const gatherEvidence = (
  kernels: KernelsService,
  health: HealthDataService,
  data: Dataset,
  offsets: Int32Array,
  u: Understanding,
  requestedAxes: ReadonlyArray<Axis>,
  w: Window,
  minimumCell: number
) =>
  Effect.gen(function*() {
    const n = data.patients.count
    const everyone = u.drugs.length === 0 && u.conditions.length === 0
    const all = new Uint8Array(n).fill(1)
    const cohort = everyone ? { mask: all, size: n } : yield* health.select({ drugs: u.drugs, conditions: u.conditions })
    const minimumSimilar = Math.max(MIN_SIMILAR, minimumCell)
    const enough = cohort.size >= minimumSimilar

    // Encounters of the similar patients that started in the window.
    const firstDay = firstDayOfMonth(data.firstMonth + w.from)
    const encounters = enough ? encountersFrom(data, offsets, cohort.mask, firstDay) : 0

    // Named axes: the similar patients against everyone.
    const axes: Array<AxisEvidence> = []
    if (enough && u.axes.length > 0) {
      const mine = (yield* windowStats(kernels, data, u.axes, cohort.mask, w)).stats
      const pop = yield* everyoneStats(data, `${u.axes.join(",")}/${w.from}/${w.to}`, Effect.map(windowStats(kernels, data, u.axes, all, w), (r) => r.stats))
      u.axes.forEach((axis, k) => {
        const s = mine[k]!
        const slope = s.n === 0 ? Number.NaN : s.sum / s.n
        const sd = s.n < 2 ? Number.NaN : Math.sqrt(Math.max(0, (s.sumSq - (s.sum * s.sum) / s.n) / (s.n - 1)))
        const p = oneSampleTP(s.n, s.sum, s.sumSq)
        axes.push({
          axis,
          level: s.level,
          scored: s.scored,
          populationLevel: pop[k]!.level,
          n: s.n,
          negative: s.negative,
          slope,
          halfWidth: s.n < 2 ? Number.NaN : t95(s.n - 1) * sd / Math.sqrt(s.n),
          p,
          populationSlope: pop[k]!.n === 0 ? Number.NaN : pop[k]!.sum / pop[k]!.n,
          shareDeclining: s.n === 0 ? Number.NaN : s.negative / s.n,
          populationShareDeclining: pop[k]!.n === 0 ? Number.NaN : pop[k]!.negative / pop[k]!.n,
          populationN: pop[k]!.n,
          populationNegative: pop[k]!.negative,
          verdict: s.n === 0 ? "stable" : verdictOf(slope, p)
        })
      })
    }

    // Interactions of every pair of named drugs.
    const interactions: Array<{ pair: readonly [string, string]; found: Interaction | undefined }> = []
    for (let i = 0; i < u.drugs.length; i++) {
      for (let j = i + 1; j < u.drugs.length; j++) {
        const pair = [u.drugs[i]!, u.drugs[j]!].sort() as unknown as readonly [string, string]
        interactions.push({ pair, found: INTERACTIONS.find((x) => x.drugs[0] === pair[0] && x.drugs[1] === pair[1]) })
      }
    }

    // Adverse events of the named drugs among the similar patients, patients per drug and event type.
    const adverse = enough && u.drugs.length > 0 ? adverseAmong(data, cohort.mask, u.drugs, firstDay) : []

    // Correlations of the requested axes across patients' window means (similar patients, or everyone when too few).
    const corrMask = enough ? cohort.mask : all
    const corrSize = enough ? cohort.size : n
    const correlations: Record<string, number> = {}
    if (requestedAxes.length >= 2) {
      // The members' window means, axis-major: the correlation kernel's layout (k series of `count` points, the mask's size).
      const { count, raw } = yield* windowStats(kernels, data, requestedAxes, corrMask, w)
      const k = requestedAxes.length
      const points = raw.mean
      // Only Pearson is reported: skip the ranks (most of the kernel's work over a large cohort).
      const r = yield* kernels.correlationMatrix(points, 1, k, count, { spearman: false })
      let pair = 0
      for (let a = 0; a < k; a++) {
        for (let b = a + 1; b < k; b++) {
          const v = r.pearson[pair++]!
          // A pair with an axis the patients have no scores of (or no spread in) has no correlation: left out, not 0.
          if (Number.isFinite(v)) correlations[pairKey(requestedAxes[a]!, requestedAxes[b]!)] = v
        }
      }
    }

    return {
      window: w,
      population: n,
      similar: cohort.size,
      enough,
      minimumSimilar,
      everyone,
      encounters,
      axes,
      interactions,
      adverse,
      correlations,
      correlationPatients: corrSize,
      correlationOverEveryone: !enough || everyone
    } satisfies Evidence
  })
