/**
 * The portal's times on Effect's TestClock, over a real database: a rolled token keeps working
 * until its grace period ends and not a moment after; a session ends after 30 idle minutes, and
 * after 12 hours however busy; an invite link works for 24 hours, once. And the password rules
 * (NIST SP 800-63B): length, the common list, the person's own words; the hash's parameters.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { TestClock } from "effect/testing"
import { Accounts } from "../../src/auth/Accounts.ts"
import { AppConfig } from "../../src/config/AppConfig.ts"
import * as Database from "../../src/db/Database.ts"
import { hashPassword, passwordProblem, verifyPassword } from "../../src/portal/passwords.ts"
import { People, PortalRefused } from "../../src/portal/People.ts"
import { tempDataDir } from "../support/server.ts"

const START = Date.UTC(2026, 11, 6, 9, 0, 0)
const MINUTE = 60_000
const HOUR = 60 * MINUTE

const layer = () =>
  Layer.mergeAll(People.layer, Accounts.layer).pipe(
    Layer.provideMerge(Database.layer),
    Layer.provide(AppConfig.layerTest({ dataDir: tempDataDir(), authCacheMs: 0 }))
  )
const run = <A, E>(body: Effect.Effect<A, E, People | Accounts>) => Effect.andThen(TestClock.setTime(START), Effect.scoped(Effect.provide(body, layer())))

/** A portal refusal's status and code. */
const refusal = <A, E>(effect: Effect.Effect<A, E>) => Effect.map(Effect.flip(effect), (e) => (e instanceof PortalRefused ? `${e.status} ${e.code}` : String(e)))

const newOwner = Effect.gen(function*() {
  const accounts = yield* Accounts
  const people = yield* People
  const account = yield* accounts.create({ name: `portal-${crypto.randomUUID().slice(0, 8)}`, tier: "starter" })
  const { code } = yield* people.invite({ accountId: account.id, email: "Owner@Example.org", role: "owner", by: "test" })
  const person = yield* people.acceptInvite(code, "a long enough passphrase")
  return { account, person }
})

describe("on a test clock", () => {
  it.effect("a rolled token answers until its grace period ends, then is expired; the new one answers", () =>
    run(Effect.gen(function*() {
      const accounts = yield* Accounts
      const { account } = yield* newOwner
      const old = yield* accounts.issueToken({ accountId: account.id, label: "ci" })
      const rolled = yield* accounts.rollToken(old.info.id, 3600)
      assert.strictEqual(rolled.old.expiresAt, new Date(START + HOUR).toISOString())
      assert.strictEqual(rolled.info.label, "ci")
      yield* TestClock.adjust(HOUR - 1000)
      assert.strictEqual((yield* accounts.authenticate(old.token)).tokenId, old.info.id)
      yield* TestClock.adjust(1000)
      const after = yield* Effect.flip(accounts.authenticate(old.token))
      assert.strictEqual(after._tag === "AuthFailure" ? after.reason : "", "expired")
      assert.strictEqual((yield* accounts.authenticate(rolled.token)).tokenId, rolled.info.id)
      // A token rolled with no grace stops at once; an expired one cannot be rolled again.
      const now = yield* accounts.rollToken(rolled.info.id, 0)
      assert.strictEqual(yield* Effect.flip(Effect.map(accounts.authenticate(rolled.token), () => "answered")).pipe(Effect.map((e) => (e._tag === "AuthFailure" ? e.reason : "?"))), "expired")
      assert.strictEqual((yield* Effect.flip(accounts.rollToken(rolled.info.id, 60)))._tag, "TokenNotFound")
      assert.strictEqual((yield* accounts.authenticate(now.token)).tokenId, now.info.id)
    })))

  it.effect("a session ends after 30 idle minutes, or 12 hours after its sign-in however busy", () =>
    run(Effect.gen(function*() {
      const people = yield* People
      const { person } = yield* newOwner
      const idle = yield* people.startSession(person.id, undefined)
      yield* TestClock.adjust(29 * MINUTE)
      assert.isDefined(yield* people.session(idle.id))
      yield* TestClock.adjust(29 * MINUTE)
      assert.isDefined(yield* people.session(idle.id), "each request renews the idle timeout")
      yield* TestClock.adjust(30 * MINUTE)
      assert.isUndefined(yield* people.session(idle.id))

      const busy = yield* people.startSession(person.id, undefined)
      for (let m = 0; m < 12 * 60 - 10; m += 10) {
        yield* TestClock.adjust(10 * MINUTE)
        assert.isDefined(yield* people.session(busy.id), `minute ${m + 10}`)
      }
      yield* TestClock.adjust(10 * MINUTE)
      assert.isUndefined(yield* people.session(busy.id))
    })))

  it.effect("a new sign-in ends the session the browser held; sign out everywhere ends them all", () =>
    run(Effect.gen(function*() {
      const people = yield* People
      const { person } = yield* newOwner
      const first = yield* people.startSession(person.id, undefined)
      const second = yield* people.startSession(person.id, first.id)
      assert.isUndefined(yield* people.session(first.id))
      const elsewhere = yield* people.startSession(person.id, undefined)
      assert.strictEqual(yield* people.endSessions(person.id), 2)
      assert.isUndefined(yield* people.session(second.id))
      assert.isUndefined(yield* people.session(elsewhere.id))
    })))

  it.effect("an invite works for 24 hours, and once", () =>
    run(Effect.gen(function*() {
      const people = yield* People
      const { account } = yield* newOwner
      const late = yield* people.invite({ accountId: account.id, email: "late@example.org", role: "developer", by: "test" })
      const once = yield* people.invite({ accountId: account.id, email: "once@example.org", role: "developer", by: "test" })
      yield* TestClock.adjust(24 * HOUR - 1000)
      const dev = yield* people.acceptInvite(once.code, "another long passphrase")
      assert.strictEqual(dev.role, "developer")
      assert.strictEqual(yield* refusal(people.acceptInvite(once.code, "another long passphrase")), "410 invite_invalid")
      yield* TestClock.adjust(1000)
      assert.strictEqual(yield* refusal(people.invitation(late.code)), "410 invite_invalid")
    })))
})

describe("passwords", () => {
  it.effect("refuses short, common, one-run and own-word passwords; accepts a passphrase", () =>
    Effect.gen(function*() {
      const own = ["ana.lopez@example.org", "ana.lopez", "hcc"]
      assert.match((yield* passwordProblem("short pass", own))!, /shorter than 12/)
      assert.match((yield* passwordProblem("1q2w3e4r5t6y", own))!, /commonly used/)
      assert.match((yield* passwordProblem("QWERTY123456", own))!, /commonly used/)
      assert.match((yield* passwordProblem("aaaaaaaaaaaaaa", own))!, /repeated or running/)
      assert.match((yield* passwordProblem("abcdefghijklmn", own))!, /repeated or running/)
      assert.match((yield* passwordProblem("Ana.Lopez2026", own))!, /e-mail address/)
      assert.isUndefined(yield* passwordProblem("violet kettle harbour", own))
      // Twelve characters as a person counts them: code points, after NFKC.
      assert.isUndefined(yield* passwordProblem("ÄÖÜäöüßÄÖÜäö", own))
    }))

  it.effect("stores scrypt at N = 2^17, r = 8, p = 1 with a random salt, and verifies only the same password", () =>
    Effect.gen(function*() {
      const a = yield* hashPassword("violet kettle harbour")
      const b = yield* hashPassword("violet kettle harbour")
      assert.match(a, /^scrypt\$17\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/)
      assert.notStrictEqual(a, b)
      assert.isTrue(yield* verifyPassword("violet kettle harbour", a))
      assert.isFalse(yield* verifyPassword("violet kettle harbouR", a))
    }))
})
