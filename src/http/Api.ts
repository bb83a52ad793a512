/**
 * The HTTP contract, built from the loaded plugins: one HttpApi value drives the router, the
 * OpenAPI document and the docs page. Contract only: no server, data or WASM code here.
 */
import { Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, HttpApiSecurity, OpenApi } from "effect/http-api"
import { CurrentPrincipal } from "../auth/CurrentPrincipal.ts"
import { CatalogResponse, HealthResponse, UsageResponse } from "../catalog/CatalogSchema.ts"
import type { DomainErrorSpec, Plugin } from "../plugin/spec.ts"
import {
  BadRequest,
  Conflict,
  InternalError,
  NotReady,
  PayloadTooLarge,
  TooManyRequests,
  Unauthorized,
  Unavailable,
  UnsupportedMediaType,
  Unprocessable
} from "./Problems.ts"
import { GUIDES, guidePath } from "./Guides.ts"
import { polishForGenerators } from "./OpenApiPolish.ts"

/** Bearer authentication, burst limit, and the caller as `CurrentPrincipal`. */
export class Authorization extends HttpApiMiddleware.Service<Authorization, { provides: CurrentPrincipal }>()(
  "hcc/Authorization",
  { security: { bearer: HttpApiSecurity.bearer }, error: [Unauthorized, TooManyRequests, InternalError, Unavailable] }
) {}

/** Liveness and readiness, without a token. */
export const SystemGroup = HttpApiGroup.make("system").add(
  HttpApiEndpoint.get("healthz", "/healthz", { success: HealthResponse }).annotateMerge(
    OpenApi.annotations({ summary: "Liveness: the process answers" })
  ),
  HttpApiEndpoint.get("readyz", "/readyz", { success: HealthResponse, error: NotReady }).annotateMerge(
    OpenApi.annotations({ summary: "Readiness: database reachable and data loaded" })
  )
)

/** Catalog and usage: authenticated, free. */
export const PlatformGroup = HttpApiGroup.make("platform").add(
  HttpApiEndpoint.get("catalog", "/v1/catalog", { success: CatalogResponse }).annotateMerge(
    OpenApi.annotations({ summary: "Domains, axes, vocabularies, endpoints and their costs (free)" })
  ),
  HttpApiEndpoint.get("usage", "/v1/usage", { success: UsageResponse }).annotateMerge(
    OpenApi.annotations({ summary: "The caller's usage today and what is left of each limit (free)" })
  )
).middleware(Authorization)

/** The success schema of a plugin endpoint: its response fields plus the declared `hcc_cost`. */
export const successSchema = <F extends Schema.Struct.Fields>(plugin: { readonly response: Schema.Struct<F>; readonly hcc_cost: number }) =>
  Schema.Struct({
    ...plugin.response.fields,
    hcc_cost: Schema.Literal(plugin.hcc_cost).annotate({ description: "HCC credits this call cost" }),
    suppressed: Schema.optionalKey(Schema.Array(Schema.String)).annotate({
      description: "JSON pointers of the fields withheld (set to null) because they would rest on fewer patients than the minimum cell size; absent when nothing was (docs/api.md, Small cells)"
    })
  })

/** What the HTTP contract needs of a plugin: its contract, no code (a plugin's `contract.ts` or the plugin itself). */
export interface EndpointContract<Name extends string, Req extends Schema.Top, F extends Schema.Struct.Fields> {
  readonly name: Name
  readonly path: string
  readonly summary: string
  readonly description?: string | undefined
  readonly request: Req
  readonly response: Schema.Struct<F>
  readonly hcc_cost: number
  readonly errors?: ReadonlyArray<DomainErrorSpec> | undefined
  readonly experimental?: boolean | undefined
}

/** The POST endpoint of one plugin. */
export const pluginEndpoint = <Name extends string, Req extends Schema.Top, F extends Schema.Struct.Fields>(plugin: EndpointContract<Name, Req, F>) =>
  HttpApiEndpoint.post(plugin.name, plugin.path as `/${string}`, {
    payload: plugin.request,
    success: successSchema(plugin),
    error: [BadRequest, Conflict, Unprocessable, UnsupportedMediaType, PayloadTooLarge, Unavailable, InternalError]
  }).annotateMerge(
    OpenApi.annotations({
      summary: plugin.summary,
      description: [
        plugin.description ?? plugin.summary,
        `Costs ${plugin.hcc_cost} HCC credits per successful call.`,
        (plugin.errors ?? []).length === 0
          ? ""
          : "Domain errors:\n" + (plugin.errors ?? []).map((e) => `- \`${e.code}\` (${e.status}): ${e.description}`).join("\n"),
        plugin.experimental === true ? "**Experimental**: this endpoint may change without a major version." : ""
      ].filter((s) => s !== "").join("\n\n")
    })
  )

/** Builds the whole API for a set of plugins. */
export const makeApi = (plugins: ReadonlyArray<Plugin>, info: { readonly version: string }) => {
  const base = HttpApi.make("hcc").add(SystemGroup).add(PlatformGroup)
  const endpoints = plugins.map(pluginEndpoint)
  const [first, ...rest] = endpoints
  // Plugin endpoints are only known at run time, so their group is typed loosely; the platform's
  // own groups keep full types for the handlers and a typed client.
  const withDomains = first === undefined
    ? base
    : (base.add(HttpApiGroup.make("domains").add(first, ...rest).middleware(Authorization)) as unknown as typeof base)
  return withDomains.annotateMerge(
    OpenApi.annotations({
      title: "HCC Medical Intelligence API",
      version: info.version,
      description:
        "Health-analytics queries over eight wellness axes. Every response carries `hcc_cost` (HCC credits); " +
        "errors are RFC 9457 problem+json with a stable `code`. Authenticate with `Authorization: Bearer <HCC token>`.\n\n" +
        "**Not medical advice.** Answers are statistics over a dataset, for research and software integration; they are not " +
        "a diagnosis or a treatment recommendation for anyone. **The default dataset is synthetic**: generated patients with " +
        "planted effects, no real person's data. GET /v1/catalog (`dataset`) and the `HCC-Dataset-As-Of` / `HCC-Dataset-Source` " +
        "headers of every data answer say which dataset an answer comes from.\n\n" +
        "**Guides:** " + GUIDES.map((g) => `[${g.title}](${guidePath(g.page)})`).join(" · ") + ". A problem answer's `type` links to its code in [Errors](/docs/errors).",
      transform: (spec) => polishForGenerators(addIdempotencyKey(addExamples(spec, plugins), plugins), plugins)
    })
  )
}

/** Declares the optional Idempotency-Key header on every plugin operation (docs/api.md, "Retrying safely"). */
const addIdempotencyKey = (spec: Record<string, any>, plugins: ReadonlyArray<Plugin>): Record<string, any> => {
  for (const plugin of plugins) {
    const op = spec.paths?.[plugin.path]?.post
    if (op === undefined) continue
    op.parameters = [
      ...(op.parameters ?? []),
      {
        name: "Idempotency-Key",
        in: "header",
        required: false,
        description: "Makes a retry safe: the same key with the same body within 24 hours gets the stored answer and is charged once; " +
          "with a different body it is a 422 idempotency_key_reused; while the first request still runs, a 409 idempotency_key_in_use. " +
          "Only successful answers are stored. 1–255 visible ASCII characters, e.g. a UUID.",
        schema: { type: "string", minLength: 1, maxLength: 255, pattern: "^[\\x21-\\x7E]+$" }
      }
    ]
  }
  return spec
}

/** Puts each plugin's examples on its operation's request body (OpenAPI `examples` map). */
const addExamples = (spec: Record<string, any>, plugins: ReadonlyArray<Plugin>): Record<string, any> => {
  for (const plugin of plugins) {
    const content = spec.paths?.[plugin.path]?.post?.requestBody?.content?.["application/json"]
    if (content === undefined || plugin.examples === undefined || plugin.examples.length === 0) continue
    content.examples = Object.fromEntries(
      plugin.examples.map((ex) => [ex.name, { summary: ex.summary, value: ex.request }])
    )
    // The recorded answers to those examples, on the default dataset, as the 200's examples.
    const answers = plugin.examples.filter((ex) => ex.answer !== undefined)
    const ok = spec.paths?.[plugin.path]?.post?.responses?.["200"]?.content?.["application/json"]
    if (ok !== undefined && answers.length > 0) {
      ok.examples = Object.fromEntries(answers.map((ex) => [ex.name, { summary: `The answer to ${ex.name} on the default dataset`, value: ex.answer }]))
    }
  }
  return spec
}
