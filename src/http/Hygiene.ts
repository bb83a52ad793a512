/**
 * Response headers every answer carries, and CORS (docs/api.md, "Browsers: security headers and
 * CORS"): nosniff, no referrer, no framing, a Content-Security-Policy (on /docs one that allows
 * exactly its own inline script and style, by hash, and nothing from elsewhere; a page that
 * states its own policy, the explorer's or the portal's, keeps it), `no-store` on
 * answers to an authenticated request, and CORS for the origins in HCC_CORS_ORIGINS (none by default).
 */
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { createHash } from "node:crypto"

/** Headers a browser may send on a cross-origin call (preflight `Access-Control-Allow-Headers`). */
export const CORS_REQUEST_HEADERS = ["authorization", "content-type", "idempotency-key", "x-request-id", "traceparent"] as const
/** Response headers a cross-origin caller may read. */
export const CORS_EXPOSED_HEADERS = ["x-request-id", "ratelimit", "ratelimit-policy", "retry-after", "idempotent-replayed", "hcc-dataset-id", "hcc-dataset-as-of", "hcc-dataset-source", "traceparent"] as const
/** How long a browser may cache a preflight answer, in seconds. */
export const CORS_MAX_AGE_SECONDS = 600

/** The CSP of every answer but the docs page: nothing may load, nothing may frame it. */
const API_CSP = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

const sha256 = (text: string) => `'sha256-${createHash("sha256").update(text, "utf8").digest("base64")}'`

/** The hashes of a page's inline executable scripts and style elements. */
export const inlineHashes = (html: string): { readonly scripts: Array<string>; readonly styles: Array<string> } => {
  const scripts: Array<string> = []
  for (const m of html.matchAll(/<script(\s[^>]*)?>([\s\S]*?)<\/script>/g)) {
    const type = /\stype="([^"]*)"/.exec(m[1] ?? "")?.[1]
    // A JSON data block is not executed, so it is not subject to script-src.
    if (type === undefined || type === "module" || type === "text/javascript") scripts.push(sha256(m[2]!))
  }
  const styles = [...html.matchAll(/<style(\s[^>]*)?>([\s\S]*?)<\/style>/g)].map((m) => sha256(m[2]!))
  return { scripts, styles }
}

/**
 * A page's policy: scripts and styles from `script` and `style` (and any `extra` directives), images
 * from this origin or data: URLs, calls to this origin only; nothing else loads, nothing frames it,
 * no form is submitted anywhere.
 */
export const pageCsp = (script: string, style: string, extra: ReadonlyArray<string> = []): string =>
  [
    "default-src 'none'",
    `script-src ${script}`,
    `style-src ${style}`,
    ...extra,
    "img-src 'self' data:",
    "connect-src 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'none'"
  ].join("; ")

/** The CSP of the docs page for its HTML: its own inline script and style by hash, its API calls to this origin. */
export const docsCsp = (html: string): string => {
  const { scripts, styles } = inlineHashes(html)
  return pageCsp(scripts.join(" ") || "'none'", styles.join(" ") || "'none'")
}

/** The docs pages' policies, by path (each page is the same bytes for the life of the process). */
const docsPolicies = new Map<string, string>()

/** The security headers for one answer (to set together with the others: one copy of the headers per request). */
export const securityHeaders = (res: HttpServerResponse.HttpServerResponse, docsPage: string | undefined, authenticated: boolean): Record<string, string> => {
  let csp = API_CSP
  const own = res.headers["content-security-policy"]
  // A page that states its own policy (the explorer's) keeps it.
  if (docsPage !== undefined && own !== undefined) csp = own
  else if (docsPage !== undefined && res.status === 200 && res.body._tag === "Uint8Array" && res.body.contentType.startsWith("text/html")) {
    let policy = docsPolicies.get(docsPage)
    if (policy === undefined) docsPolicies.set(docsPage, policy = docsCsp(new TextDecoder().decode(res.body.body)))
    csp = policy
  }
  return authenticated ? { ...SECURITY_HEADERS, "content-security-policy": csp, "cache-control": "no-store" } : { ...SECURITY_HEADERS, "content-security-policy": csp }
}

const SECURITY_HEADERS = { "x-content-type-options": "nosniff", "referrer-policy": "no-referrer", "x-frame-options": "DENY" } as const
const EXPOSED = CORS_EXPOSED_HEADERS.join(", ")

/** CORS headers for an answer to a request from `origin`, when it is allowed (none when CORS is off). */
export const corsHeaders = (res: HttpServerResponse.HttpServerResponse, origin: string | undefined, allowed: ReadonlyArray<string>): Record<string, string> => {
  if (allowed.length === 0) return {}
  const current = res.headers["vary"]
  const vary = current === undefined ? "Origin" : /\borigin\b/i.test(current) ? current : `${current}, Origin`
  if (origin === undefined || !allowed.includes(origin)) return { vary }
  return { vary, "access-control-allow-origin": origin, "access-control-expose-headers": EXPOSED }
}

/** The answer to OPTIONS on a known path: `Allow` (the path's methods as the door lists them), and for an allowed origin's preflight the CORS grants. */
export const optionsResponse = (methods: ReadonlyArray<string>, origin: string | undefined, allowedOrigins: ReadonlyArray<string>): HttpServerResponse.HttpServerResponse => {
  const allow = methods.join(", ")
  const base = HttpServerResponse.empty({ status: 204, headers: { allow } })
  if (origin === undefined || !allowedOrigins.includes(origin)) return base
  return HttpServerResponse.setHeaders(base, {
    "access-control-allow-origin": origin,
    "access-control-allow-methods": allow,
    "access-control-allow-headers": CORS_REQUEST_HEADERS.join(", "),
    "access-control-max-age": String(CORS_MAX_AGE_SECONDS),
    vary: "Origin"
  })
}
