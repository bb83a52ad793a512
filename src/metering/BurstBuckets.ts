/**
 * The burst window as per-second buckets: at most `limit` admissions in any rolling 60 s, in O(1)
 * state whatever the limit (at most 61 counts), stored as text in the account's limiter row.
 *
 * Admissions are counted in the bucket of their whole second. At time t the window (t − 60 s, t]
 * lies inside the 61 buckets from second ⌊t⌋ − 60 to ⌊t⌋, so an admission is granted only while
 * those buckets hold fewer than `limit`: never more than `limit` in any rolling 60 s. The price of
 * O(1) state is at most one second of caution: a slot frees when its whole second has left the
 * window, up to 1 s later than an exact per-request log would free it.
 *
 * Time is the limiter clock (Metering). If it ever runs backwards (a database clock stepped back),
 * the buckets move back with it, so the window still holds exactly the last minute's admissions
 * instead of locking the account out for the length of the step.
 */

/** Length of the window in whole seconds. */
export const WINDOW_SECONDS = 60

/** Buckets that can overlap a window: the current second and the 60 before it. */
const SPAN = WINDOW_SECONDS + 1

/** One bucket: admissions in one whole second (seconds since the epoch). */
export interface Bucket {
  readonly second: number
  readonly count: number
}

/** The decision of one admission attempt and the window after it. */
export interface BurstDecision {
  readonly admitted: boolean
  /** Admissions left in the window after this decision. */
  readonly remaining: number
  /** Admissions counted in the window after this decision. */
  readonly used: number
  /** Whole seconds until the oldest counted admission leaves the window (60 when it is empty). */
  readonly resetSeconds: number
  /** Whole seconds until an admission would be granted again (0 when admitted). */
  readonly retryAfter: number
  /** The buckets to store. */
  readonly buckets: ReadonlyArray<Bucket>
}

/** Parses the stored text (`second:count` pairs, oldest first); anything malformed counts as empty. */
export const parse = (text: string): Array<Bucket> => {
  const buckets: Array<Bucket> = []
  if (text === "") return buckets
  for (const pair of text.split(",")) {
    const [s, c] = pair.split(":")
    const second = Number(s)
    const count = Number(c)
    if (Number.isSafeInteger(second) && Number.isSafeInteger(count) && count > 0) buckets.push({ second, count })
  }
  return buckets
}

/** The stored text of buckets. */
export const format = (buckets: ReadonlyArray<Bucket>): string => buckets.map((b) => `${b.second}:${b.count}`).join(",")

/**
 * The buckets as of `nowMs`: moved back if the clock ran back since `lastMs`, and without those
 * that left the window.
 */
export const current = (buckets: ReadonlyArray<Bucket>, lastMs: number, nowMs: number): Array<Bucket> => {
  // Moving back by whole seconds rounded down keeps every admission at or after its true place,
  // so the window never forgets one early.
  const shift = nowMs < lastMs ? Math.floor((lastMs - nowMs) / 1000) : 0
  const oldest = Math.floor(nowMs / 1000) - WINDOW_SECONDS
  const kept: Array<Bucket> = []
  for (const b of buckets) {
    const second = b.second - shift
    if (second >= oldest) kept.push(shift === 0 ? b : { second, count: b.count })
  }
  return kept
}

const sum = (buckets: ReadonlyArray<Bucket>): number => {
  let n = 0
  for (const b of buckets) n += b.count
  return n
}

/** Seconds from `nowMs` until bucket `second` has left the window. */
const secondsUntilGone = (second: number, nowMs: number): number => Math.max(1, Math.ceil(((second + SPAN) * 1000 - nowMs) / 1000))

/** The window's state at `nowMs` (buckets already `current`). */
export const state = (buckets: ReadonlyArray<Bucket>, limit: number, nowMs: number) => {
  const used = sum(buckets)
  return {
    used,
    remaining: Math.max(0, limit - used),
    resetSeconds: buckets.length === 0 ? WINDOW_SECONDS : secondsUntilGone(buckets[0]!.second, nowMs)
  }
}

/** Whole seconds until the window holds fewer than `limit` (0 if it already does). */
const retryAfter = (buckets: ReadonlyArray<Bucket>, limit: number, nowMs: number): number => {
  let used = sum(buckets)
  if (used < limit) return 0
  for (const b of buckets) {
    used -= b.count
    if (used < limit) return secondsUntilGone(b.second, nowMs)
  }
  return 1
}

/** Tries to admit one request at `nowMs`; `lastMs` is the limiter time of the previous decision. */
export const admit = (buckets: ReadonlyArray<Bucket>, limit: number, lastMs: number, nowMs: number): BurstDecision => {
  const live = current(buckets, lastMs, nowMs)
  const used = sum(live)
  if (used >= limit) {
    return { admitted: false, ...state(live, limit, nowMs), retryAfter: retryAfter(live, limit, nowMs), buckets: live }
  }
  const second = Math.floor(nowMs / 1000)
  const last = live[live.length - 1]
  if (last !== undefined && last.second >= second) live[live.length - 1] = { second: last.second, count: last.count + 1 }
  else live.push({ second, count: 1 })
  return { admitted: true, ...state(live, limit, nowMs), retryAfter: 0, buckets: live }
}
