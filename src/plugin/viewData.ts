/**
 * The view representation of an answer (docs/explore.md): a caller that sends
 * `Accept: application/vnd.hcc.view+json` gets the answer with one more member, `view_data` — what
 * the endpoint's chart draws beyond the answer's own fields (each study of a forest plot, a series
 * and its cross-correlation by lag, an interval, a prediction band). `application/json` stays
 * exactly the answer. A plugin declares the member's schema (`viewData`) and computes it only when
 * {@link ViewWanted} says the caller asked; the small-cell rule covers it like the rest.
 *
 * The partial representation works the same way for a network of sites: `partial` holds the
 * aggregates (sums, counts, effects with their standard errors) from which a coordinator pools the
 * sites' answers (docs/network.md), computed only when {@link PartialWanted} says so.
 */
import * as Context from "effect/Context"
import * as Schema from "effect/Schema"
import { VIEW_MEDIA_TYPE } from "./view.ts"

export { VIEW_MEDIA_TYPE }

/** Whether the call being answered asked for the view representation (false unless it did). */
export const ViewWanted = Context.Reference<boolean>("hcc/ViewWanted", { defaultValue: () => false })

/**
 * Whether an Accept header asks for the view representation: it names the view media type with a
 * quality above zero (RFC 9110 §12.5.1) at least as high as that of `application/json` and its
 * wildcards, so `application/json, application/vnd.hcc.view+json;q=0.5` keeps the plain answer.
 */
export const wantsView = (accept: string | undefined): boolean => prefers(accept, VIEW_MEDIA_TYPE)

/**
 * The media type of an answer's partial representation: the answer and its `partial` member, the
 * aggregates a network coordinator pools across sites (docs/network.md).
 */
export const PARTIAL_MEDIA_TYPE = "application/vnd.hcc.partial+json"

/** Whether the call being answered asked for the partial representation (false unless it did). */
export const PartialWanted = Context.Reference<boolean>("hcc/PartialWanted", { defaultValue: () => false })

/** The representations of an answer: the answer itself, its view, its partial aggregates. */
export type Representation = "answer" | "view" | "partial"

/** The media type each representation is served as. */
export const MEDIA_TYPES: Readonly<Record<Representation, string>> = { answer: "application/json", view: VIEW_MEDIA_TYPE, partial: PARTIAL_MEDIA_TYPE }

/**
 * Whether an Accept header names `mediaType` with a quality above zero (RFC 9110 §12.5.1) at least
 * as high as that of `application/json` and its wildcards.
 */
const prefers = (accept: string | undefined, mediaType: string): boolean => {
  if (accept === undefined || !accept.includes(mediaType)) return false
  let wanted = 0
  let json = 0
  for (const part of accept.split(",")) {
    const [range, ...params] = part.trim().toLowerCase().split(";")
    const q = Number(params.map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined) ?? 1)
    const quality = Number.isFinite(q) ? q : 0
    if (range === mediaType) wanted = Math.max(wanted, quality)
    else if (range === "application/json" || range === "application/*" || range === "*/*") json = Math.max(json, quality)
  }
  return wanted > 0 && wanted >= json
}

/**
 * The representation an Accept header asks of a plugin: the partial one or the view where the
 * plugin has it and the header prefers it (the partial first: a coordinator names only it), else
 * the answer.
 */
export const representationOf = (accept: string | undefined, plugin: { readonly viewData?: unknown; readonly partial?: unknown }): Representation =>
  plugin.partial !== undefined && prefers(accept, PARTIAL_MEDIA_TYPE) ? "partial" : plugin.viewData !== undefined && prefers(accept, VIEW_MEDIA_TYPE) ? "view" : "answer"

/** The schema of a plugin's view representation: its response's fields and an optional `view_data`. */
export const withViewData = (response: Schema.Struct<Schema.Struct.Fields>, viewData: Schema.Top | undefined): Schema.Top =>
  withMember(response, "view_data", viewData)

/** The schema of a representation: the response's fields and an optional `member` of `schema`. */
export const withMember = (response: Schema.Struct<Schema.Struct.Fields>, member: string, schema: Schema.Top | undefined): Schema.Top =>
  schema === undefined ? response : Schema.Struct({ ...response.fields, [member]: Schema.optionalKey(schema) })
