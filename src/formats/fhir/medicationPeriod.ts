/**
 * The days a MedicationRequest covers, as the CQL Cumulative Medication Duration library reads an
 * order (CumulativeMedicationDuration 6.0.000, `medicationRequestPeriod`, used by the eCQMs):
 *
 *   start = the first dosage's `timing.repeat.boundsPeriod.start`, else `authoredOn`, else
 *           `dispenseRequest.validityPeriod.start`;
 *   total days supplied = (`dispenseRequest.expectedSupplyDuration` in days, else
 *           `dispenseRequest.quantity` ÷ (dose × doses per day)) × (1 + `numberOfRepeatsAllowed`);
 *   the period = [start, start + total − 1] when both are known (path A), else
 *           [start, `boundsPeriod.end`] when the bounds end (path B), else none.
 *
 * The dose is the single dosage's `doseAndRate` dose (a range's high end); doses per day are its
 * timing's frequency (`frequencyMax` first) per period converted to a day (CQL `ToDaily`), else the
 * number of `timeOfDay`s, else 1. The prescription's `validityPeriod.end` — when it may be filled,
 * often a year out — is not how long the drug is taken, and ends nothing. Days are whole: a
 * fractional total is truncated, as CQL's date arithmetic does, to at least one day.
 */
import type * as fhir4 from "fhir/r4.js"

/** Days per unit of a duration (UCUM codes and their spelled-out names; a month is 30 days, a year 365). */
const DAYS_PER: ReadonlyArray<readonly [RegExp, number]> = [
  [/^(s|sec|second)s?$/, 1 / 86_400],
  [/^(min|minute)s?$/, 1 / 1_440],
  [/^(h|hr|hour)s?$/, 1 / 24],
  [/^(d|day)s?$/, 1],
  [/^(wk|week)s?$/, 7],
  [/^(mo|month)s?$/, 30],
  [/^(a|year)s?$/, 365]
]

/** Days in one `unit` (a UCUM code or a unit's name), or undefined for a unit that is no duration. */
const daysPerUnit = (unit: string): number | undefined => DAYS_PER.find(([pattern]) => pattern.test(unit.trim().toLowerCase()))?.[1]

/** A Duration or Quantity in days (d, wk, mo = 30 d, a = 365 d, and h, min, s), or undefined. */
export const daysOf = (q: fhir4.Quantity | fhir4.Duration | undefined): number | undefined => {
  if (q === undefined || typeof q.value !== "number") return undefined
  const per = daysPerUnit(q.code ?? q.unit ?? "d")
  return per === undefined ? undefined : q.value * per
}

/** Doses a day of one dosage's timing (CQL `ToDaily`, else the times of day, else 1). */
const dosesPerDay = (timing: fhir4.Timing | undefined): number => {
  const repeat = timing?.repeat
  const frequency = repeat?.frequencyMax ?? repeat?.frequency
  if (typeof frequency === "number" && typeof repeat?.period === "number" && repeat.period > 0 && repeat.periodUnit !== undefined) {
    const per = daysPerUnit(repeat.periodUnit)
    if (per !== undefined) return frequency / (repeat.period * per)
  }
  const times = repeat?.timeOfDay?.length ?? 0
  return times > 0 ? times : 1
}

/** An order's period by the logic above, its days still as written (the caller reads them in its time zone). */
export interface RequestPeriod {
  /** The value the period starts at and its path, or undefined when the order has none. */
  readonly start: { readonly value: string; readonly path: string } | undefined
  /** Path A: the days supplied in all (whole, at least 1). */
  readonly days?: number
  /** Path B: the end of the dosage's bounds. */
  readonly boundsEnd?: string
}

const BOUNDS = "MedicationRequest.dosageInstruction.timing.repeat.boundsPeriod"

/** The period of an order (see the module comment): neither `days` nor `boundsEnd` when CQL gives it none. */
export const medicationRequestPeriod = (r: fhir4.MedicationRequest): RequestPeriod => {
  const dosages = r.dosageInstruction ?? []
  // CQL takes `singleton from` the dosages: with several (split or tapering doses) there is no single dose.
  const dosage = dosages.length === 1 ? dosages[0] : undefined
  const bounds = dosages[0]?.timing?.repeat?.boundsPeriod
  const validity = r.dispenseRequest?.validityPeriod
  const start = bounds?.start !== undefined ? { value: bounds.start, path: `${BOUNDS}.start` }
    : r.authoredOn !== undefined ? { value: r.authoredOn, path: "MedicationRequest.authoredOn" }
    : validity?.start !== undefined ? { value: validity.start, path: "MedicationRequest.dispenseRequest.validityPeriod.start" }
    : undefined
  const doseAndRate = dosage?.doseAndRate?.length === 1 ? dosage.doseAndRate[0] : undefined
  const dose = doseAndRate?.doseRange?.high?.value ?? doseAndRate?.doseQuantity?.value
  const quantity = r.dispenseRequest?.quantity?.value
  const supplied = daysOf(r.dispenseRequest?.expectedSupplyDuration) ??
    (typeof quantity === "number" && typeof dose === "number" && dose > 0 ? quantity / (dose * dosesPerDay(dosage?.timing)) : undefined)
  const refills = typeof r.dispenseRequest?.numberOfRepeatsAllowed === "number" ? r.dispenseRequest.numberOfRepeatsAllowed : 0
  if (supplied !== undefined && Number.isFinite(supplied) && supplied > 0) return { start, days: Math.max(1, Math.trunc(supplied * (1 + refills))) }
  if (bounds?.end !== undefined) return { start, boundsEnd: bounds.end }
  return { start }
}
