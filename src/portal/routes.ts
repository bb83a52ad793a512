/**
 * The account portal's JSON routes under /portal/api (docs/portal.md): signing up from an invite,
 * signing in and out, and — signed in — the account and its limits, usage, tokens, people and audit
 * log (passkeys in passkeyRoutes.ts). Static paths only (ids travel in bodies), so the door's route
 * table holds them as it holds the API's. Every change is written to the account's audit log: who,
 * what, when, from where, and never a token, password or session id.
 */
import * as Effect from "effect/Effect"
import type { TokenInfo } from "../auth/Accounts.ts"
import { accountJson, tokenJson } from "../auth/json.ts"
import { intField, json, ownOrigin, stringField } from "./http.ts"
import { type Kit, makeKit, PORTAL_PATH, refused, type Signed } from "./kit.ts"
import { passkeyRoutes } from "./passkeyRoutes.ts"
import { passwordProblem } from "./passwords.ts"
import { inviteLink, MAX_GRACE_SECONDS } from "./links.ts"
import { isEmail, normalEmail, type Role } from "./People.ts"

export { PORTAL_PATH }

/** Days of usage the usage page shows, today included. */
export const USAGE_DAYS = 30


/** Words a person's password may not merely be: their e-mail address, its name part, the service's name. */
const ownWords = (email: string) => [email, email.split("@")[0]!, "hcc", "medical intelligence", "hccmedical"]

/** A UTC day `n` days before `day`. */
const daysBefore = (day: string, n: number) => new Date(Date.parse(day) - n * 86_400_000).toISOString().slice(0, 10)

/** Signing up, in and out. */
const signInRoutes = ({ accounts, activeAccount, audit, open, people, sessionOf, sessionState, signed, signIn, throttle, cookie }: Kit) => {
  open("GET", "session", (req) =>
    Effect.gen(function*() {
      const { me, sessionId } = yield* sessionOf(req)
      if (me === undefined || sessionId === undefined) return json({ signed_in: false })
      return json(sessionState(me, sessionId, yield* accounts.account(me.person.accountId)))
    }))

  open("POST", "invitation", (_req, _info, body) =>
    Effect.gen(function*() {
      const found = yield* people.invitation(yield* stringField(body, "code", 100))
      const account = yield* accounts.account(found.accountId)
      return json({ email: found.email, role: found.role, account: { name: account.name } })
    }))

  open("POST", "sign-up", (req, _info, body) =>
    Effect.gen(function*() {
      yield* throttle(req, undefined)
      const code = yield* stringField(body, "code", 100)
      const password = yield* stringField(body, "password", 1024)
      const found = yield* people.invitation(code)
      const account = yield* activeAccount(found.accountId)
      const weak = yield* passwordProblem(password, ownWords(found.email))
      if (weak !== undefined) return yield* refused(400, "weak_password", `/password: ${weak}`)
      const person = yield* people.acceptInvite(code, password)
      yield* audit({ req }, person.accountId, person.email, "signed_up", { role: person.role })
      const s = yield* signIn(req, person.id)
      return json(sessionState({ person, sessionHash: "", expiresAt: s.session.expiresAt }, s.session.id, account), 201, { "set-cookie": s.cookie })
    }))

  open("POST", "sign-in", (req, _info, body) =>
    Effect.gen(function*() {
      const email = normalEmail(yield* stringField(body, "email", 320))
      yield* throttle(req, email)
      const password = yield* stringField(body, "password", 1024)
      // A wrong password for a person who exists is written to their account's log (an owner sees attempts).
      const person = yield* Effect.tapError(people.checkPassword(email, password), () =>
        Effect.flatMap(people.byEmail(email), (known) => (known === undefined ? Effect.void : audit({ req }, known.accountId, known.email, "sign_in_failed", { with: "password" }))))
      const account = yield* activeAccount(person.accountId)
      const s = yield* signIn(req, person.id)
      yield* audit({ req }, person.accountId, person.email, "signed_in", { with: "password" })
      return json(sessionState({ person, sessionHash: "", expiresAt: s.session.expiresAt }, s.session.id, account), 200, { "set-cookie": s.cookie })
    }))

  signed("POST", "password", (c) =>
    Effect.gen(function*() {
      yield* throttle(c.req, c.me.person.email)
      const current = yield* stringField(c.body, "current_password", 1024)
      const next = yield* stringField(c.body, "new_password", 1024)
      yield* people.checkPassword(c.me.person.email, current)
      const weak = yield* passwordProblem(next, ownWords(c.me.person.email))
      if (weak !== undefined) return yield* refused(400, "weak_password", `/new_password: ${weak}`)
      yield* people.setPassword(c.me.person.id, next)
      // Every other session ends; this one is renewed (ASVS 3.3.3).
      const ended = yield* people.endSessions(c.me.person.id)
      const s = yield* signIn(c.req, c.me.person.id)
      yield* audit(c, c.account.id, c.me.person.email, "password_changed", { sessions_ended: Math.max(0, ended - 1) })
      return json(sessionState({ person: c.me.person, sessionHash: "", expiresAt: s.session.expiresAt }, s.session.id, c.account), 200, { "set-cookie": s.cookie })
    }))

  signed("POST", "sign-out", (c) =>
    Effect.gen(function*() {
      yield* people.endSession(c.sessionId)
      yield* audit(c, c.account.id, c.me.person.email, "signed_out")
      return json({ signed_in: false }, 200, { "set-cookie": cookie.clear })
    }))

  signed("POST", "sign-out-everywhere", (c) =>
    Effect.gen(function*() {
      const ended = yield* people.endSessions(c.me.person.id)
      yield* audit(c, c.account.id, c.me.person.email, "signed_out_everywhere", { sessions: ended })
      return json({ signed_in: false, sessions_ended: ended }, 200, { "set-cookie": cookie.clear })
    }))

}

/** The account, its limits and its usage. */
const accountRoutes = ({ metering, signed, sql }: Kit) => {
  signed("GET", "account", (c) =>
    Effect.gen(function*() {
      const s = yield* metering.snapshot({ account: c.account, tokenId: "", tokenExpiresAt: null })
      const limit = (l: NonNullable<typeof s.daily>) => ({ limit: l.quota, used: l.used, remaining: l.remaining, window_seconds: l.windowSeconds, reset_seconds: l.resetSeconds })
      return json({ ...accountJson(c.account), day: s.day, limits: { burst: limit(s.burst), daily: s.daily === undefined ? null : limit(s.daily) }, queries_today: s.dailyQueries, hcc_cost_today: Math.round(s.dailyHccCost * 1e6) / 1e6 })
    }))

  signed("GET", "usage", (c) =>
    Effect.gen(function*() {
      const s = yield* metering.snapshot({ account: c.account, tokenId: "", tokenExpiresAt: null })
      const from = daysBefore(s.day, USAGE_DAYS - 1)
      const calls = yield* sql<{ day: string; endpoint: string; calls: number; hcc_cost: number }>`SELECT day, endpoint, COUNT(*) AS calls, SUM(hcc_cost) AS hcc_cost
        FROM usage_ledger WHERE account_id = ${c.account.id} AND day >= ${from} AND day <= ${s.day} GROUP BY day, endpoint`
      const refusals = yield* sql<{ day: string; endpoint: string; refused: number }>`SELECT day, endpoint, refused FROM usage_refused
        WHERE account_id = ${c.account.id} AND day >= ${from} AND day <= ${s.day}`
      const rows = new Map<string, { day: string; endpoint: string; calls: number; hcc_cost: number; refused: number }>()
      const row = (day: string, endpoint: string) => {
        const key = `${day} ${endpoint}`
        let r = rows.get(key)
        if (r === undefined) rows.set(key, r = { day, endpoint, calls: 0, hcc_cost: 0, refused: 0 })
        return r
      }
      for (const r of calls) Object.assign(row(r.day, r.endpoint), { calls: Number(r.calls), hcc_cost: Math.round(Number(r.hcc_cost) * 1e6) / 1e6 })
      for (const r of refusals) row(r.day, r.endpoint).refused = Number(r.refused)
      const days = [...rows.values()].sort((a, b) => a.day.localeCompare(b.day) || a.endpoint.localeCompare(b.endpoint))
      const sum = (xs: ReadonlyArray<typeof days[number]>) => ({ calls: xs.reduce((n, r) => n + r.calls, 0), hcc_cost: Math.round(xs.reduce((n, r) => n + r.hcc_cost, 0) * 1e6) / 1e6, refused: xs.reduce((n, r) => n + r.refused, 0) })
      const today = days.filter((r) => r.day === s.day)
      return json({ from, to: s.day, today: { day: s.day, ...sum(today), by_endpoint: today }, last_30_days: sum(days), days })
    }))

}

/** The account's tokens. */
const tokenRoutes = ({ accounts, audit, signed }: Kit) => {
  const ownToken = (c: Signed) =>
    Effect.gen(function*() {
      const id = yield* stringField(c.body, "token_id", 40)
      const info = yield* Effect.catchTag(accounts.tokenInfo(id), "TokenNotFound", () => Effect.succeed(undefined))
      if (info === undefined || info.accountId !== c.account.id) return yield* refused(404, "not_found", `no token ${id} in this account`)
      return info
    })
  const tokenOut = (t: TokenInfo) => {
    const { account_id: _, ...rest } = tokenJson(t)
    return rest
  }

  signed("GET", "tokens", (c) => Effect.map(accounts.listTokens(c.account.id), (list) => json({ tokens: list.map(tokenOut) })))

  signed("POST", "tokens/issue", (c) =>
    Effect.gen(function*() {
      const label = (yield* stringField(c.body, "label", 100)).trim()
      const days = yield* intField(c.body, "expires_in_days", 1, 3650)
      const now = yield* Effect.clockWith((clock) => clock.currentTimeMillis)
      const { info, token } = yield* accounts.issueToken({ accountId: c.account.id, label, expiresAt: days === undefined ? undefined : new Date(now + days * 86_400_000) })
      yield* audit(c, c.account.id, c.me.person.email, "token_issued", { token_id: info.id, label })
      return json({ token, ...tokenOut(info) }, 201)
    }))

  signed("POST", "tokens/revoke", (c) =>
    Effect.gen(function*() {
      const t = yield* ownToken(c)
      const info = yield* accounts.revokeToken(t.id)
      yield* audit(c, c.account.id, c.me.person.email, "token_revoked", { token_id: t.id, label: t.label })
      return json(tokenOut(info))
    }))

  signed("POST", "tokens/roll", (c) =>
    Effect.gen(function*() {
      const t = yield* ownToken(c)
      const grace = (yield* intField(c.body, "grace_seconds", 0, MAX_GRACE_SECONDS, 86_400))!
      const rolled = yield* Effect.catchTag(accounts.rollToken(t.id, grace), "TokenNotFound", () => Effect.fail(refused(409, "not_active", `token ${t.id} is revoked or expired already; issue a new one`)))
      yield* audit(c, c.account.id, c.me.person.email, "token_rolled", { token_id: t.id, new_token_id: rolled.info.id, grace_seconds: grace })
      return json({ token: rolled.token, ...tokenOut(rolled.info), old: tokenOut(rolled.old) }, 201)
    }))

}

/** The account's people and audit log (owners only). */
const peopleRoutes = ({ audit, config, people, signed }: Kit) => {
  const personOut = (p: { readonly id: string; readonly email: string; readonly role: Role; readonly createdAt: string }) => ({ id: p.id, email: p.email, role: p.role, created_at: p.createdAt })

  signed("GET", "people", (c) => Effect.map(people.list(c.account.id), (list) => json({ people: list.map(personOut) })), true)

  signed("POST", "people/invite", (c) =>
    Effect.gen(function*() {
      const email = normalEmail(yield* stringField(c.body, "email", 320))
      if (!isEmail(email)) return yield* refused(400, "invalid_request", "/email: is not an e-mail address")
      const role = yield* stringField(c.body, "role", 20)
      if (role !== "owner" && role !== "developer") return yield* refused(400, "invalid_request", "/role: must be owner or developer")
      const invite = yield* people.invite({ accountId: c.account.id, email, role, by: c.me.person.email })
      yield* audit(c, c.account.id, c.me.person.email, "person_invited", { email, role })
      return json({ link: inviteLink(ownOrigin(c.req, config.publicUrl), invite.code), email, role, expires_at: invite.expiresAt }, 201)
    }), true)

  signed("POST", "people/remove", (c) =>
    Effect.gen(function*() {
      const removed = yield* people.remove(c.account.id, yield* stringField(c.body, "person_id", 40))
      yield* audit(c, c.account.id, c.me.person.email, "person_removed", { email: removed.email, role: removed.role })
      return json(personOut(removed))
    }), true)

  signed("GET", "audit", (c) => Effect.map(people.auditLog(c.account.id, 500), (entries) => json({ entries })), true)

}

/** Every portal route, for the door's route table. */
export const makePortalRoutes = Effect.map(makeKit, (kit) => {
  signInRoutes(kit)
  accountRoutes(kit)
  tokenRoutes(kit)
  peopleRoutes(kit)
  passkeyRoutes(kit)
  return kit.routes
})
