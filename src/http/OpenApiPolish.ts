/**
 * The last pass over the generated OpenAPI document, so that client generators take it as it is
 * (docs/api.md, "The OpenAPI document"):
 * - a `servers` entry (relative: the document describes the server it is fetched from);
 * - operationIds a generator turns into good method names (`getCatalog`, `postDrugOutcomes`);
 * - component names without Effect's `Encoded` suffix;
 * - finite numbers as plain `number` (no `"Infinity"` / `"NaN"` string alternatives: JSON has
 *   neither, and the service never sends them), and no ±(2^53 − 1) bounds on integers that have
 *   no real bounds;
 * - `hcc_cost` a plain number whose value is in the description (and the catalog), not an enum a
 *   generator would freeze;
 * - every response header documented, and each error response listing the codes it can carry.
 */
import type { Plugin } from "../plugin/spec.ts"
import { ERROR_CATALOG } from "./errorCatalog.ts"

type Json = Record<string, any>

const SAFE = 9_007_199_254_740_991
const NON_FINITE = new Set(["Infinity", "-Infinity", "NaN"])

/** `/v1/drug-outcomes` → `DrugOutcomes`. */
const pascal = (path: string) =>
  path.replace(/^\/v1\//, "/").split(/[/_-]+/).filter((w) => w.length > 0).map((w) => w[0]!.toUpperCase() + w.slice(1)).join("")

/** Rewrites one schema node in place (and its children). */
const polishSchema = (node: unknown): unknown => {
  if (Array.isArray(node)) return node.map(polishSchema)
  if (node === null || typeof node !== "object") return node
  const n = node as Json
  // anyOf [number, "Infinity" | "-Infinity" | "NaN"] → number
  if (Array.isArray(n.anyOf)) {
    const kept = n.anyOf.filter((alt: Json) => !(alt.type === "string" && Array.isArray(alt.enum) && alt.enum.every((v: unknown) => NON_FINITE.has(String(v)))))
    if (kept.length !== n.anyOf.length) {
      const { anyOf: _, ...rest } = n
      return polishSchema(kept.length === 1 ? { ...kept[0], ...rest } : { ...rest, anyOf: kept })
    }
  }
  // anyOf with a single alternative is that alternative.
  if (Array.isArray(n.anyOf) && n.anyOf.length === 1) {
    const { anyOf, ...rest } = n
    return polishSchema({ ...anyOf[0], ...rest })
  }
  // A problem's type: the generated schema says about:blank; the guard sends /docs/errors#<code>.
  if (n.properties?.type?.enum?.[0] === "about:blank" && n.properties?.code !== undefined) {
    n.properties.type = { type: "string", format: "uri-reference", description: "Where this code is explained: /docs/errors#<code> (relative to the request URI)" }
  }
  if (n.type === "integer" || n.type === "number") {
    if (n.minimum === -SAFE) delete n.minimum
    if (n.maximum === SAFE) delete n.maximum
  }
  if (n.properties !== undefined && typeof n.properties === "object") {
    const cost = n.properties.hcc_cost as Json | undefined
    if (cost !== undefined && (Array.isArray(cost.enum) || cost.const !== undefined)) {
      const value = cost.const ?? cost.enum[0]
      n.properties.hcc_cost = { type: "number", description: `${cost.description ?? "HCC credits"} (${value} here)` }
    }
  }
  for (const [k, v] of Object.entries(n)) if (typeof v === "object" && v !== null) n[k] = polishSchema(v)
  return n
}

/** Renames `XEncoded` components to `X` and rewrites every `$ref` to them. */
const dropEncodedSuffix = (spec: Json): Json => {
  const schemas = (spec.components?.schemas ?? {}) as Json
  const renames = new Map<string, string>()
  for (const name of Object.keys(schemas)) {
    const plain = name.replace(/Encoded$/, "")
    if (plain !== name && schemas[plain] === undefined) renames.set(name, plain)
  }
  if (renames.size === 0) return spec
  const text = JSON.stringify(spec).replace(/"#\/components\/schemas\/([^"]+)"/g, (m, name: string) => (renames.has(name) ? `"#/components/schemas/${renames.get(name)}"` : m))
  const out = JSON.parse(text) as Json
  out.components.schemas = Object.fromEntries(Object.entries(out.components.schemas as Json).map(([k, v]) => [renames.get(k) ?? k, v]))
  return out
}

const HEADERS: Json = {
  "X-Request-Id": { description: "This request's id (the one sent, if valid, else a new UUID); quote it when reporting a problem", schema: { type: "string" } },
  traceparent: { description: "W3C trace context: the request's trace id (or a new one) with this server's span id", schema: { type: "string", pattern: "^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$" } },
  RateLimit: { description: "What is left of each limit: `\"burst\";r=<remaining>;t=<seconds to reset>, \"daily\";r=…;t=…` (IETF RateLimit fields draft)", schema: { type: "string" } },
  "RateLimit-Policy": { description: "The account's limits: `\"burst\";q=<quota>;w=60, \"daily\";q=<quota>;w=86400`", schema: { type: "string" } },
  "Retry-After": { description: "Seconds to wait before retrying", schema: { type: "integer", minimum: 0 } },
  "Idempotent-Replayed": { description: "`true` when this is the stored answer to an earlier request with the same Idempotency-Key (not charged again)", schema: { type: "string", enum: ["true"] } },
  "HCC-Dataset-Id": { description: "The id of the dataset the answer was computed from (the catalog's `dataset.id`; renewed by every import or generation, so an answer names its dataset across refreshes)", schema: { type: "string" } },
  "HCC-Dataset-As-Of": { description: "The as_of date of the dataset the answer was computed from", schema: { type: "string" } },
  "HCC-Dataset-Source": { description: "`synthetic` (generated; the default) or `imported`", schema: { type: "string", enum: ["synthetic", "imported"] } }
}
const ref = (name: string) => ({ $ref: `#/components/headers/${name}` })

const TAGS: Readonly<Record<string, string>> = {
  system: "Liveness and readiness probes (no token, free)",
  platform: "The catalog and the caller's usage (token, free)",
  domains: "The analytic endpoints, one per plugin (token, charged per successful call)"
}

/** The codes a status can carry on an operation: the platform's, and the plugin's own. */
const codesFor = (status: number, plugin: Plugin | undefined, authenticated: boolean, domain: boolean): Array<string> => {
  const platform = ERROR_CATALOG.filter((e) => e.status === status).map((e) => e.code)
  const own = (plugin?.errors ?? []).filter((e) => e.status === status).map((e) => e.code)
  const relevant = platform.filter((code) => {
    if (!domain && ["invalid_request", "malformed_json", "unknown_field", "payload_too_large", "unsupported_media_type", "idempotency_key_in_use", "idempotency_key_reused", "cohort_too_small"].includes(code)) return false
    if (!domain && code.startsWith("unknown_")) return false
    if (domain && code.startsWith("unknown_") && !["unknown_field"].includes(code)) return false
    if (!authenticated && ["missing_token", "invalid_token", "rate_limited"].includes(code)) return false
    return !["not_found", "method_not_allowed", "request_timeout", "headers_too_large"].includes(code)
  })
  return [...new Set([...relevant, ...own])]
}

/** The polished document. */
export const polishForGenerators = (input: Json, plugins: ReadonlyArray<Plugin>): Json => {
  const spec = dropEncodedSuffix(polishSchema(input) as Json)
  spec.servers = [{ url: "/", description: "The server this document was fetched from" }]
  spec.tags = (spec.tags ?? []).map((t: Json) => ({ ...t, description: t.description ?? TAGS[t.name] }))
  spec.components = { ...spec.components, headers: { ...(spec.components?.headers ?? {}), ...HEADERS } }
  for (const [path, operations] of Object.entries(spec.paths as Json)) {
    const plugin = plugins.find((p) => p.path === path)
    for (const [method, op] of Object.entries(operations as Json)) {
      if (typeof op !== "object" || op === null || op.responses === undefined) continue
      op.operationId = `${method}${pascal(path)}`
      const authenticated = Array.isArray(op.security) && op.security.length > 0
      for (const [status, response] of Object.entries(op.responses as Json)) {
        const code = Number(status)
        const headers: Json = { ...(response.headers ?? {}), "X-Request-Id": ref("X-Request-Id"), traceparent: ref("traceparent") }
        if (authenticated && code !== 401) {
          headers.RateLimit = ref("RateLimit")
          headers["RateLimit-Policy"] = ref("RateLimit-Policy")
        }
        if (code === 429 || code === 503 || code === 409) headers["Retry-After"] = ref("Retry-After")
        if (plugin !== undefined && code === 200) {
          headers["Idempotent-Replayed"] = ref("Idempotent-Replayed")
          headers["HCC-Dataset-Id"] = ref("HCC-Dataset-Id")
          headers["HCC-Dataset-As-Of"] = ref("HCC-Dataset-As-Of")
          headers["HCC-Dataset-Source"] = ref("HCC-Dataset-Source")
        }
        response.headers = headers
        if (code >= 400) {
          const codes = codesFor(code, plugin, authenticated, plugin !== undefined)
          if (codes.length > 0) response.description = `${response.description ?? "Error"}. Codes: ${codes.map((c) => `\`${c}\``).join(", ")} (docs/errors.md)`
        }
      }
    }
  }
  return spec
}
