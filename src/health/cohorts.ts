/** Cohort selection over a loaded dataset: the criteria as a chain of WASM cohort scans. */
import * as Effect from "effect/Effect"
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

/** How many patients a mask holds (a plain function ending with its loop: src/plugin/hotLoops.ts). */
const memberCount = (mask: Uint8Array): number => {
  let count = 0
  for (let p = 0; p < mask.length; p++) count += mask[p] !== 0 ? 1 : 0
  return count
}

/**
 * Writes the masked patients' indexes, in patient order, into `members` (one place more than there
 * are members). Without a branch on who is in (unpredictable over a cohort with gaps): each
 * patient is written at the next place, which moves on only past a member (the spare place takes
 * the last write). Ends with its loop (src/plugin/hotLoops.ts).
 */
const fillMembers = (mask: Uint8Array, members: Int32Array): Int32Array => {
  let j = 0
  for (let p = 0; p < mask.length; p++) {
    members[j] = p
    j += mask[p] !== 0 ? 1 : 0
  }
  return members
}

/** The masked patients' indexes, in patient order (`size` of them: the cohort's size when known, else counted). */
export const membersOf = (mask: Uint8Array, size: number = memberCount(mask)): Int32Array =>
  fillMembers(mask, new Int32Array(size + 1)).subarray(0, size)
