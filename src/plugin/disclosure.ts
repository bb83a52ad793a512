/**
 * Small-cell protection: no published figure rests on fewer than the minimum cell size of
 * patients (HCC_MIN_CELL_SIZE, the "11 rule" of CMS's cell-size suppression policy), and every
 * published count may be rounded (HCC_COUNT_ROUNDING, as OpenSAFELY rounds to a multiple of 5).
 *
 * A plugin declares which response fields are counts and which are statistics (its `disclosure`);
 * while its handler runs it reports what each statistic rests on through the {@link Disclosure}
 * service. The platform applies the rule to the encoded answer before it leaves ({@link withhold}):
 * the rule is enforced in one place, whatever the plugin does. The rules, field by field, are in
 * docs/api.md ("Small cells").
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import { DomainError } from "./errors.ts"

/** The rule in force: the minimum cell size k (1 = off) and the rounding base of counts (1 = off). */
export interface DisclosureSettings {
  readonly minimum: number
  readonly rounding: number
}

/** What the platform applies when nothing is configured. */
export const DEFAULT_DISCLOSURE: DisclosureSettings = { minimum: 11, rounding: 1 }

/**
 * The part of a plugin's answer the rule looks at, as JSON pointers (RFC 6901) into the response;
 * a `*` segment stands for every key of an object or every index of an array.
 */
export interface DisclosureSpec {
  /**
   * The field holding the number of patients the whole answer rests on. Under the minimum the
   * call is a 422 `cohort_too_small` naming the minimum (never the count); else it is rounded.
   */
  readonly cohort?: string
  /**
   * Fields that count patients or events: a count from 1 to k − 1 becomes `null` (and its pointer
   * is listed in `suppressed`), zero stays zero, the rest are rounded. They must allow `null`.
   */
  readonly counts?: ReadonlyArray<string>
  /**
   * Fields holding statistics (averages, rates, correlations, p-values) that the handler reports the
   * bases of with `Disclosure.rests`; one resting on a small cell becomes `null` and is listed in
   * `suppressed`. They must allow `null`.
   */
  readonly statistics?: ReadonlyArray<string>
}

/**
 * The counts one statistic of the answer rests on; without a pointer, a cohort the handler selected
 * (`HealthData.select`), which is what a plugin declaring no `disclosure` is held to.
 */
export interface Basis {
  readonly pointer: string | undefined
  readonly counts: ReadonlyArray<number>
}

/** The rule as a handler uses it while it answers one request. */
export interface DisclosureService extends DisclosureSettings {
  /** Whether `n` patients or events make a small cell: 1 ≤ n < minimum (zero is not one). */
  readonly small: (n: number) => boolean
  /** A count as it may be published: `null` if a small cell, else rounded (a count above zero never rounds to zero). */
  readonly count: (n: number) => number | null
  /** A count as text may state it: `fewer than 11` if a small cell, else the rounded number. */
  readonly text: (n: number) => string
  /**
   * Records the counts the statistic at `pointer` rests on (for a proportion: the denominator, the
   * events and the non-events); the platform withholds the statistic if any of them is a small cell.
   */
  readonly rests: (pointer: string, ...counts: ReadonlyArray<number>) => void
  /**
   * Fails with the platform's 422 `cohort_too_small` (naming the minimum, never `n`) when `n`
   * patients make a small cell; `what` names them for the caller ("Implants of knee_implant in the last 12 months").
   */
  readonly cohort: (n: number, what?: string) => Effect.Effect<void, DomainError>
  /** The bases recorded so far (the platform's and a result cache's view). */
  readonly bases: ReadonlyArray<Basis>
  /** Records a basis as it was recorded (a selected cohort, or one replayed from a cache). */
  readonly record: (basis: Basis) => void
}

/** The rule for the request being answered (the platform provides it to every handler). */
export class Disclosure extends Context.Service<Disclosure, DisclosureService>()("hcc/Disclosure") {}

/** Whether `n` is a small cell under `settings`. */
export const isSmall = (settings: DisclosureSettings, n: number): boolean => n >= 1 && n < settings.minimum

/** `n` rounded to the nearest multiple of the rounding base (halves up); a count above zero stays above zero. */
export const roundCount = (settings: DisclosureSettings, n: number): number =>
  settings.rounding <= 1 || n <= 0 ? n : Math.max(settings.rounding, Math.round(n / settings.rounding) * settings.rounding)

/** A fresh recorder of one computation's bases under `settings`. */
export const makeDisclosure = (settings: DisclosureSettings): DisclosureService => {
  const bases: Array<Basis> = []
  return {
    minimum: settings.minimum,
    rounding: settings.rounding,
    small: (n) => isSmall(settings, n),
    count: (n) => (isSmall(settings, n) ? null : roundCount(settings, n)),
    text: (n) => (isSmall(settings, n) ? `fewer than ${settings.minimum}` : String(roundCount(settings, n))),
    rests: (pointer, ...counts) => {
      bases.push({ pointer, counts })
    },
    cohort: (n, what) => (isSmall(settings, n) ? Effect.fail(cohortTooSmall(settings.minimum, what)) : Effect.void),
    record: (basis) => {
      bases.push(basis)
    },
    bases
  }
}

/**
 * Runs `effect` with a recorder of its own and hands its bases back beside its value: for a result
 * kept and served again (a cache), whose bases must be replayed into each later request's recorder.
 */
export const recordingBases = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(Effect.serviceOption(Disclosure), (outer) => {
    if (outer._tag === "None") return Effect.map(effect, (value) => ({ value, bases: [] as ReadonlyArray<Basis> }))
    const inner = makeDisclosure(outer.value)
    return Effect.map(Effect.provideService(effect, Disclosure, inner), (value) => ({ value, bases: inner.bases }))
  })

/** Records bases recorded earlier (by {@link recordingBases}) into the current request's recorder. */
export const replayBases = (bases: ReadonlyArray<Basis>): Effect.Effect<void> =>
  bases.length === 0 ? Effect.void : Effect.map(Effect.serviceOption(Disclosure), (d) => {
    if (d._tag === "Some") for (const b of bases) d.value.record(b)
  })

/** The 422 for an answer that would rest on a small cell: it names the minimum, never the count. */
export const cohortTooSmall = (minimum: number, what = "The answer"): DomainError =>
  new DomainError({
    code: "cohort_too_small",
    detail: `${what} would rest on fewer than ${minimum} patients, the minimum cell size this service publishes; widen the question.`,
    context: { minimum }
  })

/** Why an answer cannot be given at all (the platform renders a 422 `cohort_too_small`). */
export interface Withheld {
  readonly _tag: "CohortTooSmall"
  readonly minimum: number
}

/** The answer with the rule applied, or why none can be given. */
export type WithholdResult =
  | { readonly _tag: "Answer"; readonly body: Record<string, unknown> }
  | Withheld

/** RFC 6901 pointer segments. */
const segmentsOf = (pointer: string): Array<string> =>
  pointer === "" ? [] : pointer.slice(1).split("/").map((s) => s.replaceAll("~1", "/").replaceAll("~0", "~"))

const escape = (segment: string) => segment.replaceAll("~", "~0").replaceAll("/", "~1")

/** Every concrete pointer a pattern matches in `value`, with the value there. */
const expand = (value: unknown, pattern: string): Array<{ pointer: string; value: unknown }> => {
  let found: Array<{ pointer: string; value: unknown }> = [{ pointer: "", value }]
  for (const segment of segmentsOf(pattern)) {
    const next: Array<{ pointer: string; value: unknown }> = []
    for (const { pointer, value: here } of found) {
      if (here === null || typeof here !== "object") continue
      const record = here as Record<string, unknown>
      const keys = segment === "*" ? Object.keys(record) : Object.hasOwn(record, segment) ? [segment] : []
      for (const key of keys) next.push({ pointer: `${pointer}/${escape(key)}`, value: record[key] })
    }
    found = next
  }
  return found
}

/** Sets the value at an existing pointer of a (copied) answer. */
const setAt = (root: Record<string, unknown>, pointer: string, value: unknown): void => {
  const segments = segmentsOf(pointer)
  let here: Record<string, unknown> = root
  for (const segment of segments.slice(0, -1)) here = here[segment] as Record<string, unknown>
  here[segments.at(-1)!] = value
}

/**
 * Applies the rule to one encoded answer:
 * - `cohort` under the minimum → no answer (`CohortTooSmall`); a plugin declaring no `disclosure`
 *   at all gets the same for any cohort it selected, so it cannot publish from a small one;
 * - `counts` in 1..k−1 → `null`, the rest rounded;
 * - a statistic whose recorded bases hold a small cell → `null`;
 * - `suppressed`: the sorted pointers of what was withheld, present only when something was.
 */
export const withhold = (
  settings: DisclosureSettings,
  spec: DisclosureSpec | undefined,
  answer: Record<string, unknown>,
  bases: ReadonlyArray<Basis>
): WithholdResult => {
  const tooSmall: Withheld = { _tag: "CohortTooSmall", minimum: settings.minimum }
  if (spec === undefined) {
    if (bases.some((b) => b.pointer === undefined && b.counts.some((n) => isSmall(settings, n)))) return tooSmall
    return { _tag: "Answer", body: answer }
  }
  const edits = new Map<string, number | null>()
  if (spec.cohort !== undefined) {
    for (const { pointer, value } of expand(answer, spec.cohort)) {
      if (typeof value !== "number") continue
      if (isSmall(settings, value)) return tooSmall
      if (roundCount(settings, value) !== value) edits.set(pointer, roundCount(settings, value))
    }
  }
  const suppressed = new Set<string>()
  for (const pattern of spec.counts ?? []) {
    for (const { pointer, value } of expand(answer, pattern)) {
      if (typeof value !== "number") continue
      if (isSmall(settings, value)) {
        edits.set(pointer, null)
        suppressed.add(pointer)
      } else if (roundCount(settings, value) !== value) edits.set(pointer, roundCount(settings, value))
    }
  }
  for (const { pointer, counts } of bases) {
    if (pointer === undefined || !counts.some((n) => isSmall(settings, n))) continue
    for (const { pointer: at, value } of expand(answer, pointer)) {
      if (value === null) continue
      edits.set(at, null)
      suppressed.add(at)
    }
  }
  if (edits.size === 0) return { _tag: "Answer", body: answer }
  const body = structuredClone(answer)
  for (const [pointer, value] of edits) setAt(body, pointer, value)
  if (suppressed.size > 0) body.suppressed = [...suppressed].sort()
  return { _tag: "Answer", body }
}
