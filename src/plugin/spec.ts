/**
 * The plugin contract's own definitions: the version, what a plugin declares (PluginSpec), how the
 * platform holds one (Plugin) and the two constructors. The contract module (Plugin.ts) re-exports
 * them with the helpers a plugin uses; the platform imports them from here.
 */
import type * as Effect from "effect/Effect"
import type * as Schema from "effect/Schema"
import type { Dataset, HealthData } from "../health/HealthData.ts"
import type { PatientData } from "../health/PatientData.ts"
import type { Kernels } from "../kernels/Kernels.ts"
import type { Disclosure, DisclosureSpec } from "./disclosure.ts"
import type { DomainError } from "./errors.ts"
import type { PluginView } from "./view.ts"


/** Version of this contract. A plugin states the range it was written for in `engine`. */
export const PLUGIN_API_VERSION = "2.13.0"

/** HTTP statuses a plugin may give its domain errors. */
export const DOMAIN_ERROR_STATUSES = [400, 422, 503] as const

/** A domain error a plugin declares it may raise (documented in the OpenAPI document and the catalog). */
export interface DomainErrorSpec {
  /** Stable snake_case code, e.g. `unknown_drug`. */
  readonly code: string
  /** 422 (well-formed but unanswerable) in most cases. */
  readonly status: (typeof DOMAIN_ERROR_STATUSES)[number]
  /** One sentence: when it happens and what the caller can do. */
  readonly description: string
}

/** A documented sample call: shown in the OpenAPI document and run by the conformance suite. */
export interface PluginExample<RequestEncoded> {
  /** Short identifier, e.g. `sample`. */
  readonly name: string
  /** One line for the reader. */
  readonly summary: string
  /** The JSON body, exactly as a caller sends it. */
  readonly request: RequestEncoded
  /** Members the response must contain (deep partial match); checked by the conformance suite. */
  readonly expect?: Readonly<Record<string, unknown>>
  /**
   * The whole answer on the default dataset (shown as the 200 example in the OpenAPI document).
   * Record it with `npm run docs:examples`; a test re-runs the example and compares.
   */
  readonly answer?: Readonly<Record<string, unknown>>
}

/**
 * The services a handler may require: the dataset through counts, cohorts, series and windows
 * (`PatientData`), the small-cell rule of the request (`Disclosure`), and from the experimental
 * entry the dataset's columns (`HealthData`) and the WASM compute core (`Kernels`). Time comes
 * from effect's `Clock` and settings from effect's `Config` (both always available, no
 * requirement needed); a plugin that needs none of them uses `never`. The data services fail with
 * DomainError `unavailable` while the dataset loads: let it pass, the platform answers 503 with
 * Retry-After.
 */
export type PluginServices = PatientData | Disclosure | Kernels | HealthData

/** One site's answer to a network question: its partial representation, as JSON (docs/network.md). */
export interface SiteAnswer {
  readonly name: string
  readonly answer: Readonly<Record<string, unknown>>
}

/** The typed description of one plugin. */
export interface PluginSpec<
  Req extends Schema.Top,
  Res extends Schema.Struct<Schema.Struct.Fields>,
  R extends PluginServices = never
> {
  /** Unique kebab-case name, e.g. `drug-outcomes`; listed in the catalog's `domains`. */
  readonly name: string
  /** The plugin's own semver version. */
  readonly version: string
  /** Semver range of PLUGIN_API_VERSION the plugin was written for, e.g. `^1.0.0`. */
  readonly engine: string
  /** `POST` path under `/v1`, e.g. `/v1/drug-outcomes`. */
  readonly path: `/v1/${string}`
  /** One line for the catalog and the OpenAPI document. */
  readonly summary: string
  /** Longer Markdown description for the OpenAPI document. */
  readonly description?: string
  /** Schema of the request body; decoded with unknown fields rejected. */
  readonly request: Req
  /** Schema of the response body, without `hcc_cost` (the platform adds it). */
  readonly response: Res
  /** HCC credits each successful call costs: finite, ≥ 0, fixed per plugin. */
  readonly hcc_cost: number
  /** Domain errors the handler may raise. */
  readonly errors?: ReadonlyArray<DomainErrorSpec>
  /** Closed vocabularies the request accepts (listed in the catalog), e.g. `{ outcome_type: [...] }`. */
  readonly vocabularies?: Readonly<Record<string, ReadonlyArray<string>>>
  /** Sample calls; the first is the OpenAPI example. */
  readonly examples?: ReadonlyArray<PluginExample<Req["Encoded"]>>
  /** Marks the endpoint as unstable surface in the catalog and the OpenAPI document. */
  readonly experimental?: boolean
  /**
   * Which response fields count patients or events and which statistics may be withheld, for the
   * platform's small-cell rule (docs/plugins.md, "Small cells"). A plugin that declares none is
   * held to the rule for every cohort it selects: one under the minimum cell size is a 422.
   */
  readonly disclosure?: DisclosureSpec
  /**
   * How an answer is drawn (view.ts): a Vega-Lite specification over tables made from the request
   * and the answer, checked against the schemas when the plugin loads (rule `view_invalid`).
   */
  readonly view?: PluginView
  /** How the network coordinator's answer is drawn, where it draws more than `view` (e.g. a forest plot across the sites); `view` by default. */
  readonly networkView?: PluginView
  /**
   * Schema of `view_data`: what the answer's view representation adds for its chart (viewData.ts),
   * returned by the handler as `view_data` when `ViewWanted` says the caller asked, and dropped from
   * the plain answer. Its pointers (`/view_data/…`) may appear in `disclosure` and in the view's tables.
   */
  readonly viewData?: Schema.Top
  /**
   * Schema of `partial`: the aggregates a network coordinator pools from this site's answer
   * (docs/network.md), returned by the handler as `partial` when `PartialWanted` says the caller
   * asked for the partial representation. Its pointers (`/partial/…`) may appear in `disclosure`:
   * a site publishes only what its own small-cell rule lets through.
   */
  readonly partial?: Schema.Top
  /**
   * Pools the sites' partial answers into the network's answer (docs/network.md): a value of the
   * response type (with `view_data` when `ViewWanted`), and `incomplete`, the pointers of pooled
   * values that some site's part is missing from (it withheld a small cell). Records what each
   * value rests on with `Disclosure`, as a handler does: the network's own rule applies.
   */
  readonly pool?: (request: Req["Type"], sites: ReadonlyArray<SiteAnswer>) => Effect.Effect<Res["Type"] & { readonly incomplete?: ReadonlyArray<string> }, DomainError, Disclosure>
  /**
   * Work done once per loaded dataset, before the service reports ready (e.g. fitting a model), so
   * no request pays for it. Keep the result with {@link preparedPerDataset} and read it back in the
   * handler. A failure is logged; the plugin then answers 503 `unavailable`, other domains are served.
   */
  readonly prepare?: (dataset: Dataset) => Effect.Effect<void, unknown, Kernels>
  /**
   * Answers one decoded request. A plugin that declares `viewData` adds `view_data` to the value it
   * returns when `ViewWanted` is true (a value of its response type with one more member).
   */
  readonly handler: (request: Req["Type"]) => Effect.Effect<Res["Type"], DomainError, R>
}

/**
 * What a plugin declares besides its code: name, path, schemas, cost, errors, vocabularies,
 * examples and small-cell declaration. A typed client needs only this (a plugin's `contract.ts`,
 * which imports no handler), and `definePlugin({ ...contract, handler })` completes it.
 */
export type PluginContract<
  Req extends Schema.Top,
  Res extends Schema.Struct<Schema.Struct.Fields>
> = Omit<PluginSpec<Req, Res, never>, "handler" | "prepare" | "pool">

/** A contract that still knows its name and schemas (what {@link defineContract} returns). */
export type TypedContract<Name extends string, Req extends Schema.Top, Res extends Schema.Struct<Schema.Struct.Fields>> = PluginContract<Req, Res> & {
  readonly name: Name
  readonly request: Req
  readonly response: Res
}

/** Declares a plugin's contract (its code comes with {@link definePlugin}). */
export const defineContract = <
  const Name extends string,
  Req extends Schema.Top,
  Res extends Schema.Struct<Schema.Struct.Fields>
>(contract: PluginContract<Req, Res> & { readonly name: Name }): TypedContract<Name, Req, Res> => contract as TypedContract<Name, Req, Res>

/** A plugin with its types erased, as the registry and the HTTP layer hold it. */
export interface Plugin {
  readonly name: string
  readonly version: string
  readonly engine: string
  readonly path: string
  readonly summary: string
  readonly description?: string
  readonly request: Schema.Top
  readonly response: Schema.Struct<Schema.Struct.Fields>
  readonly hcc_cost: number
  readonly errors?: ReadonlyArray<DomainErrorSpec>
  readonly vocabularies?: Readonly<Record<string, ReadonlyArray<string>>>
  readonly examples?: ReadonlyArray<PluginExample<unknown>>
  readonly experimental?: boolean
  readonly disclosure?: DisclosureSpec
  readonly view?: PluginView
  readonly networkView?: PluginView
  readonly viewData?: Schema.Top
  readonly partial?: Schema.Top
  readonly pool?: (request: any, sites: ReadonlyArray<SiteAnswer>) => Effect.Effect<unknown, DomainError, Disclosure>
  readonly prepare?: (dataset: Dataset) => Effect.Effect<void, unknown, Kernels>
  readonly handler: (request: unknown) => Effect.Effect<unknown, DomainError, PluginServices>
  /** Answered on the HTTP thread, never on a compute thread (a network endpoint: it holds no data, it waits on the sites). */
  readonly onHttpThread?: boolean
}

/**
 * A plugin that still knows its name and schemas (what `definePlugin` returns): the registry holds
 * it as a {@link Plugin}; a typed client builds its methods from it.
 */
export interface TypedPlugin<
  Name extends string,
  Req extends Schema.Top,
  Res extends Schema.Struct<Schema.Struct.Fields>
> extends Plugin {
  readonly name: Name
  readonly request: Req
  readonly response: Res
}

/** Declares a plugin, keeping its handler fully typed against its schemas. */
export const definePlugin = <
  const Name extends string,
  Req extends Schema.Top,
  Res extends Schema.Struct<Schema.Struct.Fields>,
  R extends PluginServices = never
>(spec: PluginSpec<Req, Res, R> & { readonly name: Name }): TypedPlugin<Name, Req, Res> => spec as unknown as TypedPlugin<Name, Req, Res>

/**
 * Attaches recorded answers (example name → the whole answer on the default dataset) to a plugin's
 * examples: `export default withAnswers(answers, definePlugin({ … }))`. They become the 200
 * examples of the OpenAPI document.
 */
export const withAnswers = <P extends { readonly examples?: ReadonlyArray<PluginExample<any>> | undefined }>(answers: Readonly<Record<string, unknown>>, plugin: P): P => ({
  ...plugin,
  examples: (plugin.examples ?? []).map((ex) => {
    const answer = answers[ex.name]
    return answer === undefined ? ex : { ...ex, answer: answer as Readonly<Record<string, unknown>> }
  })
})
