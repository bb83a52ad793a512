/**
 * The eight axes: codes in canonical order, their published names, the score scale
 * and the schemas plugins use for them. Part of the plugin contract.
 */
import * as Schema from "effect/Schema"

/** Axis codes, always listed in this order. */
export const AXES = ["PO", "NM", "ER", "SC", "RS", "ES", "TA", "PV"] as const
/** One axis code. */
export type Axis = (typeof AXES)[number]

/** Published axis names. */
export const AXIS_NAMES: Readonly<Record<Axis, string>> = {
  PO: "Physical & Outdoor",
  NM: "Nutritional & Metabolic",
  ER: "Emotional & Relational",
  SC: "Social & Communal",
  RS: "Religious & Spiritual",
  ES: "Environmental & Stewardship",
  TA: "Technological & Adaptive",
  PV: "Provisional & Vocational"
}

/** Inclusive range of an axis score. */
export const AXIS_SCORE_RANGE = [0, 10] as const

/** An axis code in a request. */
export const AxisCode = Schema.Literals(AXES).annotate({ description: "Axis code: PO NM ER SC RS ES TA PV" })

/** A finite axis score in [0, 10]. */
export const AxisScore = Schema.Finite.check(Schema.isBetween({ minimum: 0, maximum: 10 })).annotate({
  description: "Axis score, a finite number in [0, 10]"
})

/** Sorts axis codes into canonical order. */
export const canonicalOrder = <A extends Axis>(axes: ReadonlyArray<A>): Array<A> =>
  [...axes].sort((a, b) => AXES.indexOf(a) - AXES.indexOf(b))

/** The `<axis>_<axis>` key of an unordered pair, axes in canonical order (`PO_NM`, never `NM_PO`). */
export const pairKey = (a: Axis, b: Axis): string => (AXES.indexOf(a) <= AXES.indexOf(b) ? `${a}_${b}` : `${b}_${a}`)
