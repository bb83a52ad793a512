/** Request value shapes shared by plugins (part of the plugin contract). */
import * as Schema from "effect/Schema"
import { SNAKE_CASE, STANDARD_NOTATION } from "./codeSystems.ts"

/** Inclusive bounds of an age range. */
export const AGE_LIMITS = [0, 120] as const

/** `<low>-<high>` → [low, high], or undefined when the text is not a valid age range. */
export const parseAgeRange = (text: string): readonly [number, number] | undefined => {
  const m = /^(\d{1,3})-(\d{1,3})$/.exec(text)
  if (m === null) return undefined
  const lo = Number(m[1])
  const hi = Number(m[2])
  return lo >= AGE_LIMITS[0] && hi <= AGE_LIMITS[1] && lo <= hi ? [lo, hi] : undefined
}

/** `<n>_months`, n 1–120 in at most three digits (leading zeros allowed, as parseMonths does). */
const MONTHS_PATTERN = "^(0{0,2}[1-9]|0?[1-9][0-9]|1[01][0-9]|120)_months$"
/** `<n>_days`, n 1–3650 in at most four digits. */
const DAYS_PATTERN = "^(0{0,3}[1-9]|0{0,2}[1-9][0-9]|0?[1-9][0-9]{2}|[12][0-9]{3}|3[0-5][0-9]{2}|36[0-4][0-9]|3650)_days$"
/** `minimum_<n>`, n 1–10,000,000 in at most eight digits. */
const MINIMUM_PATTERN = "^minimum_(0{0,7}[1-9]|0{0,6}[1-9][0-9]|0{0,5}[1-9][0-9]{2}|0{0,4}[1-9][0-9]{3}|0{0,3}[1-9][0-9]{4}|0{0,2}[1-9][0-9]{5}|0?[1-9][0-9]{6}|10000000)$"

/** One age 0–120 in at most three digits (leading zeros allowed, as the parser does). */
const AGE_PATTERN = "(0{0,2}[0-9]|0?[1-9][0-9]|1[01][0-9]|120)"

/**
 * An age range `<low>-<high>`, ages 0–120, low ≤ high (e.g. `55-64`). Its JSON Schema pattern
 * states the form and the ages exactly; low ≤ high, which no JSON Schema keyword can say, is in
 * the description (the fragment is marked approximate).
 */
export const AgeRange = Schema.String.check(
  Schema.makeFilter((s: string) => parseAgeRange(s) !== undefined || "Expected an age range <low>-<high> with ages 0–120 and low ≤ high, e.g. 55-64", {
    toJsonSchema: () => [{ pattern: `^${AGE_PATTERN}-${AGE_PATTERN}$` }, true],
    arbitraryConstraint: { patterns: [{ source: `^${AGE_PATTERN}-${AGE_PATTERN}$`, flags: "" }] }
  })
).annotate({ description: "Age range `<low>-<high>` (inclusive ages 0–120, low ≤ high), e.g. `55-64`" })

/** A vocabulary code or a standard code in `system:code` notation (codeSystems.ts). */
const CODE_PATTERN = `^(?:${SNAKE_CASE.regex.source.slice(1, -1)}|${STANDARD_NOTATION.source.slice(1, -1)})$`

/**
 * A vocabulary code: snake_case (`type_2_diabetes`), or a standard code in `system:code` notation
 * (`snomed:44054006`, `icd10cm:E11.9`, `rxnorm:6809`). Known or not: an unknown one is a 422 with
 * suggestions, not a 400.
 */
export const Code = Schema.String.check(
  Schema.makeFilter((s: string) => SNAKE_CASE.regex.test(s) || STANDARD_NOTATION.test(s) || "Expected a snake_case code, e.g. type_2_diabetes, or a standard code system:code, e.g. snomed:44054006", {
    toJsonSchema: () => ({ pattern: CODE_PATTERN }),
    arbitraryConstraint: { patterns: [{ source: SNAKE_CASE.regex.source, flags: "" }] }
  })
)

/** A non-empty array of distinct values. */
export const distinctNonEmpty = <S extends Schema.Top>(item: S) =>
  Schema.Array(item).check(
    Schema.makeFilter((xs: ReadonlyArray<unknown>) => xs.length > 0 || "Expected at least one value", { toJsonSchema: () => ({ minItems: 1 }), arbitraryConstraint: { minSize: 1 } }),
    Schema.makeFilter((xs: ReadonlyArray<unknown>) => new Set(xs).size === xs.length || "Expected distinct values", { toJsonSchema: () => ({ uniqueItems: true }), arbitraryConstraint: { uniqueBy: (x: unknown) => x } })
  )

/** `<n>_months` → n (1–120), or undefined. */
export const parseMonths = (text: string): number | undefined => {
  const m = /^(\d{1,3})_months$/.exec(text)
  const n = m === null ? Number.NaN : Number(m[1])
  return n >= 1 && n <= 120 ? n : undefined
}

/** A period `<n>_months`, n 1–120 (e.g. `12_months`). */
export const Months = Schema.String.check(
  Schema.makeFilter((s: string) => parseMonths(s) !== undefined || "Expected <n>_months with n from 1 to 120, e.g. 12_months", {
    toJsonSchema: () => ({ pattern: MONTHS_PATTERN }),
    arbitraryConstraint: { patterns: [{ source: MONTHS_PATTERN, flags: "" }] }
  })
).annotate({ description: "`<n>_months`, n from 1 to 120" })

/** `<n>_days` → n (1–3650), or undefined. */
export const parseDays = (text: string): number | undefined => {
  const m = /^(\d{1,4})_days$/.exec(text)
  const n = m === null ? Number.NaN : Number(m[1])
  return n >= 1 && n <= 3650 ? n : undefined
}

/** A period `<n>_days`, n 1–3650 (e.g. `90_days`). */
export const Days = Schema.String.check(
  Schema.makeFilter((s: string) => parseDays(s) !== undefined || "Expected <n>_days with n from 1 to 3650, e.g. 90_days", {
    toJsonSchema: () => ({ pattern: DAYS_PATTERN }),
    arbitraryConstraint: { patterns: [{ source: DAYS_PATTERN, flags: "" }] }
  })
).annotate({ description: "`<n>_days`, n from 1 to 3650" })

/** `minimum_<n>` → n (1–10,000,000), or undefined. */
export const parseMinimum = (text: string): number | undefined => {
  const m = /^minimum_(\d{1,8})$/.exec(text)
  const n = m === null ? Number.NaN : Number(m[1])
  return n >= 1 && n <= 10_000_000 ? n : undefined
}

/** A minimum population `minimum_<n>`, n ≥ 1 (e.g. `minimum_500`). */
export const Minimum = Schema.String.check(
  Schema.makeFilter((s: string) => parseMinimum(s) !== undefined || "Expected minimum_<n> with n from 1 to 10000000, e.g. minimum_500", {
    toJsonSchema: () => ({ pattern: MINIMUM_PATTERN }),
    arbitraryConstraint: { patterns: [{ source: MINIMUM_PATTERN, flags: "" }] }
  })
).annotate({ description: "`minimum_<n>`, n ≥ 1" })
