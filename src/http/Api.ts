/**
 * The HTTP contract, built from the loaded plugins: one HttpApi value drives the router, the
 * OpenAPI document and the docs page. The groups and endpoints it is made of are ApiContract.ts's
 * (what the typed client shares); this adds the guides and the OpenAPI document's polish.
 */
import * as HttpApi from "effect/http-api/HttpApi"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import { jsonSchemaDocument } from "../plugin/jsonSchemaAt.ts"
import type { Plugin } from "../plugin/spec.ts"
import { VIEW_MEDIA_TYPE } from "../plugin/view.ts"
import { PARTIAL_MEDIA_TYPE } from "../plugin/viewData.ts"
import { Authorization, PlatformGroup, pluginEndpoint, SystemGroup } from "./ApiContract.ts"
import { GUIDES, guidePath } from "./Guides.ts"
import { polishForGenerators } from "./OpenApiPolish.ts"

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
        "**[Explorer](/docs/explore):** ask any endpoint with a form and see the answer drawn (each operation's `x-hcc-view`).\n\n" +
        "**Guides:** " + GUIDES.map((g) => `[${g.title}](${guidePath(g.page)})`).join(" · ") + ". A problem answer's `type` links to its code in [Errors](/docs/errors).",
      transform: (spec) => polishForGenerators(addViews(addIdempotencyKey(addExamples(spec, plugins), plugins), plugins), plugins)
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

/**
 * Publishes each plugin's view (src/plugin/view.ts) on its operation as the extension `x-hcc-view`
 * (OpenAPI 3.1 allows `x-` members on an operation): how the explorer and the clients draw its answers.
 */
const addViews = (spec: Record<string, any>, plugins: ReadonlyArray<Plugin>): Record<string, any> => {
  for (const plugin of plugins) {
    const op = spec.paths?.[plugin.path]?.post
    if (op === undefined) continue
    if (plugin.view !== undefined) op["x-hcc-view"] = plugin.view
    // The view and partial representations (docs/api.md): the 200's answer and `view_data` or `partial`.
    const ok = op.responses?.["200"]?.content
    if (ok?.["application/json"] === undefined) continue
    const representations = [
      [VIEW_MEDIA_TYPE, "view_data", plugin.viewData, "The view representation: the answer and `view_data`, what its chart draws beyond the answer"],
      [PARTIAL_MEDIA_TYPE, "partial", plugin.partial, "The partial representation: the answer and `partial`, the aggregates a network coordinator pools (docs/network.md)"]
    ] as const
    for (const [mediaType, member, schema, description] of representations) {
      if (schema === undefined) continue
      const added = jsonSchemaDocument(schema)
      const definitions = spec.components.schemas as Record<string, unknown>
      for (const [name, s] of Object.entries(added.definitions)) definitions[name] ??= s
      const local = (s: unknown): unknown => JSON.parse(JSON.stringify(s).replaceAll("\"#/$defs/", "\"#/components/schemas/"))
      // The answer's schema (closed to other members) with the member added.
      const plain = ok["application/json"].schema
      const answer = typeof plain.$ref === "string" ? definitions[plain.$ref.split("/").at(-1)] as Record<string, any> : plain
      ok[mediaType] = {
        schema: {
          ...answer,
          description: `${description} (asked with Accept: ${mediaType})`,
          properties: { ...answer.properties, [member]: local(added.schema) },
          required: [...(answer.required ?? []), member]
        }
      }
    }
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
