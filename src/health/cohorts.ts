/** Cohort selection over a loaded dataset: the criteria as a chain of WASM cohort scans. */
import { Effect } from "effect"
import type { KernelsService } from "../kernels/Kernels.ts"
import { AXES } from "../plugin/axes.ts"
import { DomainError } from "../plugin/errors.ts"
import { closest } from "../plugin/suggest.ts"
import { resolveCode } from "./codes.ts"
import type { CohortCriteria, Dataset } from "./HealthData.ts"
import { SEXES } from "../plugin/vocabularies.ts"

const unknownCode = (kind: "condition" | "drug" | "region", code: string, known: ReadonlyArray<string>) =>
  new DomainError({
    code: `unknown_${kind}`,
    detail: `No ${kind} named '${code}' in the dataset.`,
    suggestions: closest(code, known)
  })

/** Cohort selection over a loaded dataset (exported for tests and benchmarks). */
export const selectCohort = (kernels: KernelsService, data: Dataset, criteria: CohortCriteria) =>
  Effect.gen(function*() {
    const p = data.patients
    let mask: Uint8Array = new Uint8Array(p.count).fill(1)
    const orDie = <A>(e: Effect.Effect<A, unknown>) => Effect.orDie(e)
    if (criteria.ageRange !== undefined) {
      const asOfYear = Number(data.asOf.slice(0, 4))
      mask = yield* orDie(kernels.maskRange(p.birthYear, asOfYear - criteria.ageRange[1], asOfYear - criteria.ageRange[0], mask))
    }
    if (criteria.sex !== undefined) {
      const set = new Uint8Array(SEXES.length)
      for (const s of criteria.sex) set[SEXES.indexOf(s)] = 1
      mask = yield* orDie(kernels.maskInSet(p.sex, set, mask))
    }
    if (criteria.regions !== undefined) {
      const set = new Uint8Array(data.vocabulary.region.length)
      for (const r of criteria.regions) {
        const i = data.vocabulary.region.indexOf(r)
        if (i < 0) return yield* Effect.fail(unknownCode("region", r, data.vocabulary.region))
        set[i] = 1
      }
      mask = yield* orDie(kernels.maskInSet(p.region, set, mask))
    }
    for (const [kind, codes, columns] of [["condition", criteria.conditions, p.conditions], ["drug", criteria.drugs, p.drugs]] as const) {
      for (const text of codes ?? []) {
        const code = resolveCode(data, kind, text)
        const col = code === undefined ? undefined : columns.get(code)
        if (col === undefined) return yield* Effect.fail(unknownCode(kind, text, [...columns.keys()]))
        mask = yield* orDie(kernels.maskFlag(col, mask))
      }
    }
    const from = criteria.months?.from ?? 0
    const to = criteria.months?.to ?? data.months
    for (const [axis, bounds] of Object.entries(criteria.axes ?? {})) {
      if (bounds === undefined) continue
      const lo = bounds.min ?? Number.NEGATIVE_INFINITY
      const hi = bounds.max ?? Number.POSITIVE_INFINITY
      mask = yield* orDie(kernels.panelMeanMask(data.panel, AXES.indexOf(axis as (typeof AXES)[number]), from, to, lo, hi, mask))
    }
    return { mask, size: yield* orDie(kernels.maskCount(mask)) }
  })
