/**
 * What every portal route shares (docs/portal.md, "Sessions"): JSON in and out, never cached; the
 * session cookie (`__Host-hcc_session`, Secure, when the service is reached over https; else
 * `hcc_session`), HttpOnly and SameSite=Strict; the origin check of every state-changing request
 * (its `Origin` must be the service's own, and a browser's `Sec-Fetch-Site` same-origin); and the
 * CSRF token of a signed-in request (`X-CSRF-Token`, derived from the session id: only a page that
 * could read this origin's answers knows it).
 */
import * as Effect from "effect/Effect"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { createHash, timingSafeEqual } from "node:crypto"
import type { IncomingMessage } from "node:http"
import { readBody } from "../http/Door.ts"
import { PROBLEM_JSON } from "../http/Problems.ts"
import type { RequestInfo } from "../http/RequestContext.ts"
import { PortalRefused } from "./People.ts"

/** The cookie's name and attributes for a service reached at `publicUrl` (undefined: over http, at its Host). */
export const cookieOf = (publicUrl: string | undefined) => {
  const secure = publicUrl?.startsWith("https://") === true
  const name = secure ? "__Host-hcc_session" : "hcc_session"
  const attributes = `Path=/; HttpOnly; SameSite=Strict${secure ? "; Secure" : ""}`
  return {
    name,
    /** Set-Cookie for a new session (a browser session cookie: the server's timeouts end it). */
    set: (id: string) => `${name}=${id}; ${attributes}`,
    /** Set-Cookie that removes it. */
    clear: `${name}=; ${attributes}; Max-Age=0`,
    /** The session id a request carries, if any. */
    read: (req: IncomingMessage): string | undefined => {
      for (const part of (req.headers.cookie ?? "").split(";")) {
        const eq = part.indexOf("=")
        if (eq > 0 && part.slice(0, eq).trim() === name) {
          const value = part.slice(eq + 1).trim()
          return /^[A-Za-z0-9_-]{43}$/.test(value) ? value : undefined
        }
      }
      return undefined
    }
  }
}

/** The CSRF token of a session: a hash of its id under a purpose of its own. */
export const csrfOf = (sessionId: string): string => createHash("sha256").update(`hcc-portal-csrf\u0000${sessionId}`).digest("base64url")

/** Whether a request's CSRF header is its session's token. */
export const csrfMatches = (req: IncomingMessage, sessionId: string): boolean => {
  const given = Buffer.from(String(req.headers["x-csrf-token"] ?? ""))
  const expected = Buffer.from(csrfOf(sessionId))
  return given.length === expected.length && timingSafeEqual(given, expected)
}

/** The origin a request should come from: the public URL's, else this Host over http. */
export const ownOrigin = (req: IncomingMessage, publicUrl: string | undefined): string => publicUrl ?? `http://${req.headers.host ?? ""}`

/** Why a state-changing request is refused for where it comes from, or undefined when it is from the portal itself. */
export const originProblem = (req: IncomingMessage, publicUrl: string | undefined): string | undefined => {
  const site = req.headers["sec-fetch-site"]
  if (site !== undefined && site !== "same-origin") return `a ${site} request cannot change anything here`
  const origin = req.headers.origin
  if (origin === undefined) return "a request that changes something must say its Origin"
  if (origin !== ownOrigin(req, publicUrl)) return `requests from ${origin} cannot change anything here`
  return undefined
}

/** The client's address as this process sees it (behind a proxy, the proxy's). */
export const addressOf = (req: IncomingMessage): string => req.socket.remoteAddress ?? "unknown"

/** A JSON answer that no cache keeps. */
export const json = (body: unknown, status = 200, headers: Record<string, string> = {}): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.text(JSON.stringify(body), { status, contentType: "application/json", headers: { "cache-control": "no-store", ...headers } })

/** Reason phrases of the portal's refusals (the API's own are in the error catalogue). */
const TITLES: Readonly<Record<number, string>> = { 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 409: "Conflict", 410: "Gone", 429: "Too Many Requests" }

/**
 * A refusal as problem+json (RFC 9457), with the request id. Its type is `about:blank`: the
 * portal's codes are the page's own (docs/portal.md), not the API's error catalogue.
 */
export const problem = (info: RequestInfo, status: number, code: string, detail: string, headers: Record<string, string> = {}): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.text(JSON.stringify({ type: "about:blank", title: TITLES[status] ?? "Error", status, detail, code, request_id: info.requestId }), {
    status,
    contentType: PROBLEM_JSON,
    headers: { "cache-control": "no-store", ...headers }
  })

/** The request's JSON object body, or a 400 naming what is wrong. */
export const bodyOf = (req: IncomingMessage, info: RequestInfo): Effect.Effect<Record<string, unknown>, PortalRefused | unknown> =>
  Effect.flatMap(readBody(req, info), (text) => {
    let value: unknown
    try {
      value = text === "" ? {} : JSON.parse(text)
    } catch {
      return Effect.fail(new PortalRefused({ status: 400, code: "malformed_json", detail: "The body is not JSON." }))
    }
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? Effect.succeed(value as Record<string, unknown>)
      : Effect.fail(new PortalRefused({ status: 400, code: "invalid_request", detail: "The body must be a JSON object." }))
  })

/** A string field of a body, at most `max` characters, or a 400 naming it. */
export const stringField = (body: Record<string, unknown>, name: string, max: number): Effect.Effect<string, PortalRefused> => {
  const v = body[name]
  if (typeof v !== "string" || v.length === 0) return Effect.fail(new PortalRefused({ status: 400, code: "invalid_request", detail: `/${name}: is required (a string)` }))
  if (v.length > max) return Effect.fail(new PortalRefused({ status: 400, code: "invalid_request", detail: `/${name}: is longer than ${max} characters` }))
  return Effect.succeed(v)
}

/** A whole-number field from `min` to `max` (or `fallback` when absent), or a 400 naming it. */
export const intField = (body: Record<string, unknown>, name: string, min: number, max: number, fallback?: number): Effect.Effect<number | undefined, PortalRefused> => {
  const v = body[name]
  if (v === undefined || v === null) return Effect.succeed(fallback)
  if (typeof v !== "number" || !Number.isInteger(v) || v < min || v > max) return Effect.fail(new PortalRefused({ status: 400, code: "invalid_request", detail: `/${name}: must be a whole number from ${min} to ${max}` }))
  return Effect.succeed(v)
}
