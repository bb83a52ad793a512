/**
 * The sign-in throttle: the API's own burst limiter (BurstBuckets over a row of the database, so
 * every process and replica counts together) keyed by what is throttled — the e-mail address tried
 * and the client's address — instead of an account. Every attempt counts, right or wrong, so a
 * guesser cannot tell a throttled attempt from a wrong one by trying the right password between.
 */
import * as Effect from "effect/Effect"
import type * as SqlError from "effect/sql/SqlError"
import { createHash } from "node:crypto"
import { LimiterStore } from "../db/LimiterStore.ts"
import * as BurstBuckets from "../metering/BurstBuckets.ts"

/** Sign-in attempts a minute for one e-mail address (up to 300 an hour: more than ASVS 2.2.1's 100, see docs/portal.md). */
export const SIGN_IN_PER_EMAIL = 5
/** Sign-in and sign-up attempts a minute from one client address (a household or an office may share one). */
export const SIGN_IN_PER_ADDRESS = 30

/** The throttle's row key: a hash, so no e-mail address or client address is stored in it. */
const keyOf = (kind: string, value: string) => `${kind}:${createHash("sha256").update(value.toLowerCase()).digest("hex")}`

/** Takes one attempt for each key; the seconds to wait when any of them is spent, else 0. */
export const takeAttempt = (keys: ReadonlyArray<readonly [kind: "email" | "address", value: string, limit: number]>): Effect.Effect<number, SqlError.SqlError, LimiterStore> =>
  Effect.gen(function*() {
    const store = yield* LimiterStore
    let wait = 0
    for (const [kind, value, limit] of keys) {
      const retry = yield* store.throttled(keyOf(kind, value), (row, nowMs) => {
        const d = BurstBuckets.admit(BurstBuckets.parse(row.burst), limit, row.clockMs, nowMs)
        return Effect.succeed([d.retryAfter, { ...row, burst: BurstBuckets.format(d.buckets), clockMs: Math.max(row.clockMs, nowMs) }] as const)
      })
      wait = Math.max(wait, retry)
    }
    return wait
  })
