/**
 * Calendar arithmetic on plain numbers: a day is the count of days since 1970-01-01 (UTC), a month
 * is year × 12 + (month − 1). Dates in the dataset are `YYYY-MM-DD`, months `YYYY-MM`. Pure
 * functions of their input: the dataset never depends on today's date.
 */

const DAY_MS = 86_400_000

/** The UTC day of an instant (milliseconds since the epoch). */
export const dayOfMillis = (ms: number): number => Math.floor(ms / DAY_MS)

const pad = (n: number, width: number): string => String(n).padStart(width, "0")

/** Day number of a `YYYY-MM-DD` date, or NaN when the text is not a real calendar date. */
export const parseDate = (text: string): number => {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return Number.NaN
  const [y, m, d] = text.split("-").map(Number) as [number, number, number]
  const ms = Date.UTC(y, m - 1, d)
  const back = new Date(ms)
  return back.getUTCFullYear() === y && back.getUTCMonth() === m - 1 && back.getUTCDate() === d ? ms / DAY_MS : Number.NaN
}

/** `YYYY-MM-DD` of a day number. */
export const formatDate = (day: number): string => {
  const d = new Date(day * DAY_MS)
  return `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1, 2)}-${pad(d.getUTCDate(), 2)}`
}

/** Month number of a `YYYY-MM` month, or NaN. */
export const parseMonth = (text: string): number => {
  if (!/^\d{4}-(0[1-9]|1[0-2])$/.test(text)) return Number.NaN
  const [y, m] = text.split("-").map(Number) as [number, number]
  return y * 12 + m - 1
}

/** `YYYY-MM` of a month number. */
export const formatMonth = (month: number): string => `${pad(Math.floor(month / 12), 4)}-${pad((month % 12) + 1, 2)}`

/** Days a Date can hold either side of the epoch (ECMA-262 TimeClip: ±8.64e15 ms). */
const DATE_RANGE_DAYS = 100_000_000

/**
 * The month a day falls in, by arithmetic on the proleptic Gregorian calendar (Hinnant's
 * civil_from_days: 400-year eras of 146,097 days, years from March so the leap day ends one):
 * the month `Date` gives for the same day, without making one — this runs per row of the tables.
 * NaN for NaN and for a day outside the range a Date can hold, as `Date` gives.
 */
export const monthOfDay = (day: number): number => {
  if (!(Math.abs(day) <= DATE_RANGE_DAYS)) return Number.NaN
  const z = Math.floor(day) + 719_468 // days since 0000-03-01
  const era = Math.floor(z / 146_097)
  const dayOfEra = z - era * 146_097
  const yearOfEra = Math.floor((dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365)
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100))
  const monthFromMarch = Math.floor((5 * dayOfYear + 2) / 153) // 0 = March … 11 = February
  const year = yearOfEra + era * 400 + (monthFromMarch >= 10 ? 1 : 0)
  return year * 12 + (monthFromMarch < 10 ? monthFromMarch + 2 : monthFromMarch - 10)
}

/** The first day of a month. */
export const firstDayOfMonth = (month: number): number => Date.UTC(Math.floor(month / 12), month % 12, 1) / DAY_MS

/** The last day of a month. */
export const lastDayOfMonth = (month: number): number => firstDayOfMonth(month + 1) - 1

/** The year of a day. */
export const yearOfDay = (day: number): number => new Date(day * DAY_MS).getUTCFullYear()

/** The Monday on or before a day (1970-01-01 was a Thursday). */
export const mondayOnOrBefore = (day: number): number => day - ((day + 3) % 7)

/** Quarter label `Q<n>_<year>` of a month number. */
export const quarterLabel = (month: number): string => `Q${Math.floor((month % 12) / 3) + 1}_${Math.floor(month / 12)}`
