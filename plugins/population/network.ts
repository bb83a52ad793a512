/**
 * Population across a network of sites (docs/network.md): each site's partial representation
 * holds, per period and axis, its patients, scores, the scores' sum and the moments of its
 * patients' sums; per axis its slopes' count, Σ and Σ². All are sums over patients, so the
 * network's are the sites' added up, and the answer is the one a single service gives over the
 * union of the sites' patients: each mean exactly (one-decimal scores sum exactly in f64, in any
 * order), the trend test to its published 6 significant digits (its sums of slopes may differ in
 * the last bit with the order). A cell a site withheld (its small cell) is pooled from the others
 * and listed in `network.incomplete`.
 */
import * as Effect from "effect/Effect"
import { AXES, type Axis, Disclosure, fail, oneSampleTP, roundTo, type SiteAnswer, ViewWanted } from "../../src/plugin/Plugin.ts"
import { addCell } from "./intervals.ts"
import { GRANULARITY_KEYS, PARTIAL_STATISTICS, type PopulationRequest } from "./schema.ts"

/** Sort key of a period label (YYYY-MM, Q<n>_<year>, YYYY): its first month. */
export const periodStart = (label: string): number => {
  const quarter = /^Q([1-4])_(\d{4})$/u.exec(label)
  if (quarter !== null) return Number(quarter[2]) * 12 + (Number(quarter[1]) - 1) * 3
  const [year, month] = label.split("-")
  return Number(year) * 12 + (month === undefined ? 0 : Number(month) - 1)
}

const FIELDS = ["patients", ...PARTIAL_STATISTICS] as const
type Cell = Record<(typeof FIELDS)[number], number>

/** Pools the sites' partial answers into the network's answer (members' own figures in `network`, added by the coordinator). */
export const poolPopulation = (request: typeof PopulationRequest.Type, sites: ReadonlyArray<SiteAnswer>) =>
  Effect.gen(function*() {
    const disclosure = yield* Disclosure
    const view = yield* ViewWanted
    const axes: ReadonlyArray<Axis> = AXES.filter((a) => (request.axes ?? AXES).includes(a))
    const cells = new Map<string, Map<Axis, Cell>>()
    const incomplete = new Set<string>()
    const slopes = new Map<Axis, { n: number; sum: number; squares: number }>(axes.map((a) => [a, { n: 0, sum: 0, squares: 0 }]))
    let cohort = 0
    for (const { answer } of sites) {
      cohort += answer["cohort_size"] as number
      const partial = answer["partial"] as { periods: ReadonlyArray<Record<string, string | number | null>>; slopes: ReadonlyArray<Record<string, string | number | null>> }
      for (const row of partial.periods) {
        const label = row["period"] as string
        const byAxis = cells.get(label) ?? new Map<Axis, Cell>()
        cells.set(label, byAxis)
        for (const axis of axes) {
          if (row[`patients_${axis}`] === undefined) continue
          if (row[`patients_${axis}`] === null) {
            incomplete.add(`${label} ${axis}`)
            continue
          }
          const cell = byAxis.get(axis) ?? { patients: 0, scores: 0, sum: 0, sum_squares: 0, sum_counts: 0, count_squares: 0 }
          for (const f of FIELDS) cell[f] += row[`${f}_${axis}`] as number
          byAxis.set(axis, cell)
        }
      }
      for (const s of partial.slopes) {
        const pooled = slopes.get(s["axis"] as Axis)
        if (pooled === undefined) continue
        if (s["n"] === null) {
          incomplete.add(`slopes ${s["axis"]}`)
          continue
        }
        pooled.n += s["n"] as number
        pooled.sum += s["sum"] as number
        pooled.squares += s["sum_squares"] as number
      }
    }
    if (sites.length === 0 || cohort === 0) return yield* fail("no_member_answered", "No site of the network answered this question; see context.members.")
    yield* disclosure.cohort(cohort, "The network's cohort")

    const key = GRANULARITY_KEYS[request.granularity]
    const labels = [...cells.keys()].sort((a, b) => periodStart(a) - periodStart(b))
    const periods = labels.map((label, i) => {
      const period: Record<string, string | number | null> = { [key]: label }
      for (const axis of axes) {
        const cell = cells.get(label)!.get(axis)
        if (cell === undefined) {
          period[`avg_${axis}`] = null
          continue
        }
        period[`avg_${axis}`] = roundTo(cell.sum / cell.scores, 3)
        disclosure.rests(`/periods/${i}/avg_${axis}`, cell.patients)
      }
      return period
    })
    const missing = [...incomplete].map((cell) => {
      const [label, axis] = cell.split(" ")
      return label === "slopes" ? "/statistical_significance" : `/periods/${labels.indexOf(label!)}/avg_${axis}`
    })
    disclosure.rests("/statistical_significance", ...axes.map((a) => slopes.get(a)!.n))
    const minP = Math.min(1, ...axes.map((a) => oneSampleTP(slopes.get(a)!.n, slopes.get(a)!.sum, slopes.get(a)!.squares)))
    const intervals = view ? labels.map((label, i) => intervalRow(label, i, axes, cells.get(label)!, disclosure)) : []
    return {
      cohort_size: cohort,
      analysis_type: request.analysis_type,
      periods,
      statistical_significance: Number(Math.min(1, minP * axes.length).toPrecision(6)),
      incomplete: [...new Set(missing)],
      ...(view ? { view_data: { periods: intervals } } : {})
    }
  })

/** The view's row of one pooled period: each axis's patients and the mean's interval from the pooled moments, as a site writes its own. */
const intervalRow = (label: string, i: number, axes: ReadonlyArray<Axis>, byAxis: Map<Axis, Cell>, disclosure: Disclosure["Service"]) => {
  const row: Record<string, string | number | null> = { period: label }
  for (const axis of axes) {
    const cell = byAxis.get(axis)
    if (cell === undefined) continue
    const moments = { patients: Float64Array.of(cell.patients), sumSquares: Float64Array.of(cell.sum_squares), sumCounts: Float64Array.of(cell.sum_counts), countSquares: Float64Array.of(cell.count_squares) }
    addCell("view", row, `/view_data/periods/${i}`, disclosure, axis, cell.patients, cell.scores, cell.sum, moments, 0)
  }
  return row
}
