/**
 * Device outcomes across a network of sites (docs/network.md). A study's implants may be placed at
 * several sites; each site publishes, per study and metric, its values' count, sum and sum of
 * squares, and the network adds them up per study: the study estimates are the ones one service
 * would make over the union of the sites' implants, pooled across studies by the same methods
 * (binomial-normal for rates, DerSimonian–Laird for mean scores), the forest plot the same. A
 * study's part a site withheld (its small cell) is left out and the metric listed in `incomplete`.
 */
import * as Effect from "effect/Effect"
import { Disclosure, type DisclosureService, fail, type SiteAnswer, ViewWanted } from "../../src/plugin/Plugin.ts"
import { assemble } from "./answer.ts"
import { estimatesOf, isProportion, type StudySums } from "./pooling.ts"
import type { DeviceOutcomesPartial, DeviceOutcomesRequest } from "./schema.ts"

/** A site's partial: each study's implants, and each metric's sums per study; each resting on its implants (and events). */
export const devicePartial = (
  byStudy: ReadonlyArray<{ readonly study: string; readonly implants: number }>,
  sums: ReadonlyMap<string, ReadonlyArray<StudySums>>,
  disclosure: DisclosureService
): typeof DeviceOutcomesPartial.Type => {
  const rows = [...sums].flatMap(([metric, studies]) => studies.map((s) => ({ metric, study: s.study, n: s.n, sum: s.sum, squares: s.squares })))
  rows.forEach((row, i) => {
    const basis = isProportion(row.metric) ? [row.n, row.sum, row.n - row.sum] : [row.n]
    for (const f of ["sum", "squares"]) disclosure.rests(`/partial/sums/${i}/${f}`, ...basis)
  })
  return { studies: byStudy.map((s) => ({ study: s.study, implants: s.implants })), sums: rows }
}

/** Pools the sites' partial answers (module comment). */
export const poolDeviceOutcomes = (request: typeof DeviceOutcomesRequest.Type, sites: ReadonlyArray<SiteAnswer>) =>
  Effect.gen(function*() {
    const disclosure = yield* Disclosure
    const implants = new Map<string, number>()
    const sums = new Map<string, Map<string, { n: number; sum: number; squares: number }>>(request.outcome_metrics.map((m) => [m, new Map()]))
    const incomplete = new Set<string>()
    let size = 0
    for (const { answer } of sites) {
      size += answer["sample_size"] as number
      const partial = answer["partial"] as typeof DeviceOutcomesPartial.Type
      for (const s of partial.studies) if (s.implants !== null) implants.set(s.study, (implants.get(s.study) ?? 0) + s.implants)
      for (const row of partial.sums) {
        const byStudy = sums.get(row.metric)
        if (byStudy === undefined) continue
        if (row.n === null || row.sum === null || row.squares === null) {
          incomplete.add(`/outcomes/${row.metric}`)
          continue
        }
        const total = byStudy.get(row.study) ?? { n: 0, sum: 0, squares: 0 }
        byStudy.set(row.study, { n: total.n + row.n, sum: total.sum + row.sum, squares: total.squares + row.squares })
      }
    }
    yield* disclosure.cohort(size, `The network's implants of ${request.device_category}`)
    if (size < 2) return yield* fail("cohort_too_small", "Fewer than 2 implants across the network; at least 2 are needed.")
    // Studies in the order of their ids (a site lists its studies in its dataset's order, which is theirs).
    const order = [...implants.keys()].sort()
    const estimates = new Map(request.outcome_metrics.map((metric) => {
      const byStudy = sums.get(metric)!
      const ordered = order.filter((s) => byStudy.has(s)).map((study) => ({ study, ...byStudy.get(study)! }))
      return [metric, estimatesOf(metric, ordered)] as const
    }))
    const answer = yield* assemble(request, size, [...implants.values()].filter((n) => n > 0).length, estimates, yield* ViewWanted)
    return { ...answer, incomplete: [...incomplete] }
  })
