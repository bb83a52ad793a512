/**
 * The HTTP contract as a client sees it: the platform's groups, the Authorization middleware's key
 * and the endpoint a plugin's contract makes. Schemas and keys only, so a typed client (src/client)
 * built from it loads no server, data or WASM code; the server's whole API (Api.ts) adds the
 * loaded plugins, the guides and the OpenAPI polish.
 */
import * as Schema from "effect/Schema"
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiMiddleware from "effect/http-api/HttpApiMiddleware"
import * as HttpApiSecurity from "effect/http-api/HttpApiSecurity"
import * as OpenApi from "effect/http-api/OpenApi"
import { CurrentPrincipal } from "../auth/CurrentPrincipal.ts"
import { CatalogResponse, HealthResponse, UsageResponse } from "../catalog/CatalogSchema.ts"
import type { DomainErrorSpec } from "../plugin/spec.ts"
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
