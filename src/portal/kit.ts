/**
 * What every portal route is built from (docs/portal.md): the service's parts, and the two kinds of
 * route — `open` (anyone: signing up or in) and `signed` (a signed-in person; owners only where
 * asked) — with the checks each makes before its handler runs: the origin of every change, the
 * session and its CSRF token, the role; a refusal becomes its problem answer. Also the sign-in
 * itself (a new session, its cookie), the throttle of attempts, and the audit log's writer.
 */
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { IncomingMessage } from "node:http"
import { type Account, Accounts } from "../auth/Accounts.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { LimiterStore } from "../db/LimiterStore.ts"
import type { Pipeline } from "../http/Door.ts"
import { PORTAL_PAGE_PATH } from "./links.ts"
import type { RequestInfo } from "../http/RequestContext.ts"
import { Metering } from "../metering/Metering.ts"
import { addressOf, bodyOf, cookieOf, csrfMatches, csrfOf, json, originProblem, problem } from "./http.ts"
import { People, PortalRefused, type SignedIn } from "./People.ts"
import { SIGN_IN_PER_ADDRESS, SIGN_IN_PER_EMAIL, takeAttempt } from "./Throttle.ts"

/** The portal's page. */
export const PORTAL_PATH = PORTAL_PAGE_PATH
const API = `${PORTAL_PATH}/api`

/** A refusal of a portal request: status, code, and the sentence the person reads. */
export const refused = (status: number, code: string, detail: string) => new PortalRefused({ status, code, detail })

/** What a signed-in route's handler is given. */
export interface Signed {
  readonly req: IncomingMessage
  readonly info: RequestInfo
  readonly body: Record<string, unknown>
  readonly me: SignedIn
  readonly sessionId: string
  readonly account: Account
}

/** A handler's answer. */
export type Answer = Effect.Effect<ReturnType<typeof json>, unknown>

/** The kit of one server (module comment). */
export const makeKit = Effect.gen(function*() {
  const people = yield* People
  const accounts = yield* Accounts
  const metering = yield* Metering
  const config = yield* AppConfig
  const sql = yield* SqlClient.SqlClient
  const limiter = yield* LimiterStore
  const cookie = cookieOf(config.publicUrl)
  const routes: Array<readonly [string, string, Pipeline<never>]> = []

  /** Runs a handler: a refusal becomes its problem answer; anything else is the door's 500. */
  const answer = (info: RequestInfo, effect: Answer) =>
    Effect.catchIf(effect, (e): e is PortalRefused => e instanceof PortalRefused, (e) =>
      Effect.succeed(problem(info, e.status, e.code, e.detail, e.retryAfter === undefined ? {} : { "retry-after": String(e.retryAfter) })))

  /** A route anyone may call (signing up or in); a POST must come from the portal's own origin. */
  const open = (method: "GET" | "POST", path: string, f: (req: IncomingMessage, info: RequestInfo, body: Record<string, unknown>) => Answer) =>
    routes.push([method, `${API}/${path}`, (req, info) =>
      answer(info, Effect.gen(function*() {
        if (method === "POST") {
          const why = originProblem(req, config.publicUrl)
          if (why !== undefined) return yield* refused(403, "cross_origin", why)
        }
        return yield* f(req, info, method === "POST" ? yield* bodyOf(req, info) : {})
      }))])

  /** A route for a signed-in person (`owner`: owners only); a POST also needs the origin and the session's CSRF token. */
  const signed = (method: "GET" | "POST", path: string, f: (c: Signed) => Answer, owner = false) =>
    routes.push([method, `${API}/${path}`, (req, info) =>
      answer(info, Effect.gen(function*() {
        const { me, sessionId } = yield* sessionOf(req)
        if (me === undefined || sessionId === undefined) {
          // A cookie naming no live session is removed, so the browser stops sending it.
          const stale = req.headers.cookie?.includes(`${cookie.name}=`) === true
          return problem(info, 401, "signed_out", "Sign in to the portal first (the session ended or never began).", stale ? { "set-cookie": cookie.clear } : {})
        }
        if (method === "POST") {
          const why = originProblem(req, config.publicUrl)
          if (why !== undefined) return yield* refused(403, "cross_origin", why)
          if (!csrfMatches(req, sessionId)) return yield* refused(403, "csrf", "The request lacks this session's X-CSRF-Token; reload the portal.")
        }
        if (owner && me.person.role !== "owner") return yield* refused(403, "owners_only", "Only an owner of the account can do this.")
        const account = yield* activeAccount(me.person.accountId)
        return yield* f({ req, info, body: method === "POST" ? yield* bodyOf(req, info) : {}, me, sessionId, account })
      }))])

  /** The account, unless the operator disabled it (its people then do nothing in the portal, as its tokens do nothing in the API). */
  const activeAccount = (id: string) =>
    Effect.flatMap(accounts.account(id), (account) =>
      account.disabledAt === null ? Effect.succeed(account) : Effect.fail(refused(403, "account_disabled", "This account is disabled; ask the service's operator.")))

  const audit = (c: { readonly req: IncomingMessage }, accountId: string, actor: string, action: string, detail: Record<string, string | number | null> = {}) =>
    people.audit(accountId, { actor, action, detail, address: addressOf(c.req) })

  /** Signs a person in: a new session (the one the browser held ends), its cookie, the page's state. */
  const signIn = (req: IncomingMessage, personId: string) =>
    Effect.gen(function*() {
      const session = yield* people.startSession(personId, cookie.read(req))
      return { session, cookie: cookie.set(session.id) }
    })
  const throttle = (req: IncomingMessage, email: string | undefined) =>
    Effect.gen(function*() {
      const wait = yield* Effect.provideService(takeAttempt([["address", addressOf(req), SIGN_IN_PER_ADDRESS], ...(email === undefined ? [] : [["email", email, SIGN_IN_PER_EMAIL] as const])]), LimiterStore, limiter)
      if (wait > 0) return yield* new PortalRefused({ status: 429, code: "too_many_attempts", detail: `Too many attempts; try again in ${wait} seconds.`, retryAfter: wait })
    })

  /**
   * The session a request's cookie names. A cookie that names no live session is a guess (or an
   * ended session) and counts against the address's sign-in attempts, so session ids cannot be
   * tried faster than passwords.
   */
  const sessionOf = (req: IncomingMessage) =>
    Effect.gen(function*() {
      const sessionId = cookie.read(req)
      const given = req.headers.cookie?.includes(`${cookie.name}=`) === true
      const me = sessionId === undefined ? undefined : yield* people.session(sessionId)
      if (me === undefined && given) yield* throttle(req, undefined)
      return { me, sessionId }
    })

  const sessionState = (me: SignedIn, sessionId: string, account: Account) => ({
    signed_in: true,
    person: { id: me.person.id, email: me.person.email, role: me.person.role },
    account: { id: account.id, name: account.name },
    csrf_token: csrfOf(sessionId),
    session_expires_at: me.expiresAt
  })

  return { people, accounts, metering, config, sql, cookie, routes, open, signed, audit, signIn, throttle, sessionOf, sessionState, activeAccount }
})

/** The kit's type. */
export type Kit = Effect.Success<typeof makeKit>
