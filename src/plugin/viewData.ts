/**
 * The view representation of an answer (docs/explore.md): a caller that sends
 * `Accept: application/vnd.hcc.view+json` gets the answer with one more member, `view_data` — what
 * the endpoint's chart draws beyond the answer's own fields (each study of a forest plot, a series
 * and its cross-correlation by lag, an interval, a prediction band). `application/json` stays
 * exactly the answer. A plugin declares the member's schema (`viewData`) and computes it only when
 * {@link ViewWanted} says the caller asked; the small-cell rule covers it like the rest.
 */
import { Context, Schema } from "effect"
import { VIEW_MEDIA_TYPE } from "./view.ts"

export { VIEW_MEDIA_TYPE }

/** Whether the call being answered asked for the view representation (false unless it did). */
export const ViewWanted = Context.Reference<boolean>("hcc/ViewWanted", { defaultValue: () => false })

/**
 * Whether an Accept header asks for the view representation: it names the view media type with a
 * quality above zero (RFC 9110 §12.5.1) at least as high as that of `application/json` and its
 * wildcards, so `application/json, application/vnd.hcc.view+json;q=0.5` keeps the plain answer.
 */
export const wantsView = (accept: string | undefined): boolean => {
  if (accept === undefined || !accept.includes(VIEW_MEDIA_TYPE)) return false
  let view = 0
  let json = 0
  for (const part of accept.split(",")) {
    const [range, ...params] = part.trim().toLowerCase().split(";")
    const q = Number(params.map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined) ?? 1)
    const quality = Number.isFinite(q) ? q : 0
    if (range === VIEW_MEDIA_TYPE) view = Math.max(view, quality)
    else if (range === "application/json" || range === "application/*" || range === "*/*") json = Math.max(json, quality)
  }
  return view > 0 && view >= json
}

/** The schema of a plugin's view representation: its response's fields and an optional `view_data`. */
export const withViewData = (response: Schema.Struct<Schema.Struct.Fields>, viewData: Schema.Top | undefined): Schema.Top =>
  viewData === undefined ? response : Schema.Struct({ ...response.fields, view_data: Schema.optionalKey(viewData) })
