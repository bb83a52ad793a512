/**
 * The axis model (src/import/axis-model.json, docs/data.md "The axis model"): how observations
 * become the eight monthly axis scores. Versioned data, validated here; `hcc data import
 * --axis-model <file>` takes an operator's own in the same layout.
 */
import { Schema } from "effect"
import { AXES, type Axis } from "../plugin/axes.ts"
import { systemOfFhirUri } from "../health/codeSystems.ts"
import model from "./axis-model.json" with { type: "json" }

const Score = Schema.Finite.check(Schema.isBetween({ minimum: 0, maximum: 10 }))
const Coding = Schema.Struct({ system: Schema.String, code: Schema.String })

const Linear = Schema.Struct({
  type: Schema.Literal("linear"),
  range: Schema.Tuple([Schema.Finite, Schema.Finite]).check(Schema.makeFilter((r: readonly [number, number]) => r[0] < r[1] || "Expected [low, high] with low < high")),
  direction: Schema.Literals(["higher_is_better", "lower_is_better"])
})
const Bands = Schema.Struct({
  type: Schema.Literal("bands"),
  bands: Schema.Array(Schema.Struct({ below: Schema.Finite, score: Score })).check(
    Schema.makeFilter((bs: ReadonlyArray<{ readonly below: number }>) => bs.length > 0 && bs.every((b, i) => i === 0 || bs[i - 1]!.below < b.below) || "Expected at least one band, bounds increasing")
  ),
  otherwise: Score
})
const Answers = Schema.Struct({
  type: Schema.Literal("answers"),
  answers: Schema.Array(Schema.Struct({ display: Schema.String, code: Schema.optionalKey(Schema.String), score: Score })).check(
    Schema.makeFilter((xs: ReadonlyArray<unknown>) => xs.length > 0 || "Expected at least one answer")
  )
})

/** One instrument: an observation code, the axis it informs, how its value becomes 0–10. */
export const Instrument = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  code: Coding,
  axis: Schema.Literals(AXES),
  transform: Schema.Union([Linear, Bands, Answers]),
  rationale: Schema.String,
  source: Schema.String
})
/** One instrument. */
export type Instrument = typeof Instrument.Type

/** The whole model file. */
export const AxisModelFile = Schema.Struct({
  version: Schema.String.check(Schema.isPattern(/^\d+\.\d+\.\d+$/)),
  description: Schema.String,
  direct_system: Schema.String,
  instruments: Schema.Array(Instrument)
})
/** A model, as read from its file. */
export type AxisModelFile = typeof AxisModelFile.Type

/** The shipped model. */
export const DEFAULT_AXIS_MODEL: AxisModelFile = Schema.decodeUnknownSync(AxisModelFile)(model)

/** What an observation (or a component of one) says: a number, coded answers, text. */
export interface ObservedValue {
  readonly quantity?: number
  readonly codings?: ReadonlyArray<{ readonly code?: string | undefined; readonly display?: string | undefined }>
  readonly text?: string | undefined
}

/** Why a value gave no score. */
export type Unscored = "out_of_range" | "unknown_answer" | "no_value"

/** A model ready to score: instruments by `system|code` (system as its FHIR URI, or a short name). */
export interface CompiledAxisModel {
  readonly version: string
  readonly directSystem: string
  /** The instruments an observation code names (none: the code is not in the model). */
  readonly instrumentsOf: (system: string | undefined, code: string | undefined) => ReadonlyArray<Instrument>
  /** The 0–10 score of a value for an instrument, or why it has none. */
  readonly score: (instrument: Instrument, value: ObservedValue) => number | Unscored
  /** An axis the direct system's code names, or undefined. */
  readonly directAxis: (code: string | undefined) => Axis | undefined
}

const normal = (text: string) => text.trim().toLowerCase()

/**
 * A number written as text (a FHIR `valueString` "12", an OMOP `value_as_string`), for an
 * instrument scored from a number: a plain decimal only. A comparator ("<5", ">=12") or a unit
 * makes it no number: the value is not exact, so it is left out and counted (no value).
 */
const numberIn = (text: string | undefined): number | undefined =>
  text !== undefined && /^\s*[-+]?(\d+(\.\d*)?|\.\d+)\s*$/.test(text) ? Number(text) : undefined

/** Compiles a model: an instrument matches a coding of its system (FHIR URI or short name) and code. */
export const compileAxisModel = (file: AxisModelFile): CompiledAxisModel => {
  const byKey = new Map<string, Array<Instrument>>()
  for (const instrument of file.instruments) {
    const system = systemOfFhirUri(instrument.code.system) ?? instrument.code.system
    const key = `${system}|${instrument.code.code}`
    byKey.set(key, [...(byKey.get(key) ?? []), instrument])
  }
  const answerIndex = new Map<Instrument, { readonly byCode: ReadonlyMap<string, number>; readonly byDisplay: ReadonlyMap<string, number> }>()
  for (const i of file.instruments) {
    if (i.transform.type !== "answers") continue
    answerIndex.set(i, {
      byCode: new Map(i.transform.answers.flatMap((a) => (a.code === undefined ? [] : [[a.code, a.score] as const]))),
      byDisplay: new Map(i.transform.answers.map((a) => [normal(a.display), a.score] as const))
    })
  }
  const score = (instrument: Instrument, value: ObservedValue): number | Unscored => {
    const t = instrument.transform
    if (t.type === "answers") {
      const index = answerIndex.get(instrument)!
      const texts: Array<string> = []
      for (const c of value.codings ?? []) {
        if (c.code !== undefined && index.byCode.has(c.code)) return index.byCode.get(c.code)!
        if (c.display !== undefined) texts.push(c.display)
      }
      if (value.text !== undefined) texts.push(value.text)
      for (const text of texts) {
        const s = index.byDisplay.get(normal(text))
        if (s !== undefined) return s
      }
      return texts.length === 0 && (value.codings ?? []).length === 0 ? "no_value" : "unknown_answer"
    }
    const v = value.quantity ?? numberIn(value.text)
    if (v === undefined) return "no_value"
    if (t.type === "bands") {
      for (const b of t.bands) if (v < b.below) return b.score
      return t.otherwise
    }
    const [lo, hi] = t.range
    if (v < lo || v > hi) return "out_of_range"
    const share = (v - lo) / (hi - lo)
    return 10 * (t.direction === "higher_is_better" ? share : 1 - share)
  }
  const axes = new Set<string>(AXES)
  return {
    version: file.version,
    directSystem: file.direct_system,
    instrumentsOf: (system, code) => {
      if (code === undefined) return []
      const name = systemOfFhirUri(system) ?? system
      return byKey.get(`${name}|${code}`) ?? []
    },
    score,
    directAxis: (code) => (code !== undefined && axes.has(code) ? (code as Axis) : undefined)
  }
}
