/**
 * The axis model (src/pipeline/axis-model.json, docs/data.md "The axis model"): how observations
 * become the eight monthly axis scores. Versioned data, validated here; `hcc data import
 * --axis-model <file>` takes an operator's own in the same layout.
 */
import * as Schema from "effect/Schema"
import { AXES, type Axis } from "../plugin/axes.ts"
import { systemOfFhirUri } from "../plugin/codeSystems.ts"
import model from "./axis-model.json" with { type: "json" }

const Score = Schema.Finite.check(Schema.isBetween({ minimum: 0, maximum: 10 }))
const Coding = Schema.Struct({ system: Schema.String, code: Schema.String })

const Interval = Schema.Tuple([Schema.Finite, Schema.Finite]).check(Schema.makeFilter((r: readonly [number, number]) => r[0] < r[1] || "Expected [low, high] with low < high"))
const Linear = Schema.Struct({
  type: Schema.Literal("linear"),
  /** Values from low to high score 0–10 (or 10–0); values beyond it, within `valid`, score as its nearer end. */
  range: Interval,
  /** The values an observation can plausibly hold; outside it the value is left out and counted. Default: `range`. */
  valid: Schema.optionalKey(Interval),
  direction: Schema.Literals(["higher_is_better", "lower_is_better"])
}).check(Schema.makeFilter((t: { readonly range: readonly [number, number]; readonly valid?: readonly [number, number] }) =>
  t.valid === undefined || (t.valid[0] <= t.range[0] && t.valid[1] >= t.range[1]) || "Expected valid to contain range"))
/** A value in another UCUM unit → the instrument's unit: value × factor + offset. */
const Conversion = Schema.Struct({ factor: Schema.Finite, offset: Schema.Finite })
const Unit = Schema.Struct({
  /** The UCUM code of the unit the transform's numbers are in; a value without a unit is taken in it. */
  ucum: Schema.String,
  /** Other UCUM units a value may come in, and how each converts. */
  from: Schema.optionalKey(Schema.Record(Schema.String, Conversion))
})
/** The ages (in years, the observation's year minus the year of birth) an instrument applies to: from ≤ age < below. */
const Ages = Schema.Struct({ from: Schema.optionalKey(Schema.Finite), below: Schema.optionalKey(Schema.Finite) }).check(
  Schema.makeFilter((a: { readonly from?: number; readonly below?: number }) => a.from === undefined || a.below === undefined || a.from < a.below || "Expected from < below")
)
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
  /** For a number: the unit it must be in (checked when the observation states one). */
  unit: Schema.optionalKey(Unit),
  /** Whom it applies to: a patient of another age at the observation is not scored by it. */
  ages: Schema.optionalKey(Ages),
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

/** What an observation (or a component of one) says: a number (and its unit, when stated), coded answers, text. */
export interface ObservedValue {
  readonly quantity?: number
  /** The number's unit as the source states it: a UCUM code, or a unit's text. */
  readonly unit?: string | undefined
  readonly codings?: ReadonlyArray<{ readonly code?: string | undefined; readonly display?: string | undefined }>
  readonly text?: string | undefined
}

/** Why a value gave no score. */
export type Unscored = "out_of_range" | "unknown_answer" | "no_value" | "unknown_unit"

/** The summary's note for a value an instrument did not score. */
export const unscoredNote = (instrument: Instrument, why: Unscored): string =>
  `${instrument.id}: ${
    why === "out_of_range" ? "value out of the instrument's range"
    : why === "unknown_answer" ? "answer the model does not score"
    : why === "unknown_unit" ? `value in a unit other than ${[instrument.unit?.ucum, ...Object.keys(instrument.unit?.from ?? {})].join(" or ")}`
    : "no value"
  }: left out`

/** The ages an instrument applies to, as a key (empty: every age) — scores of different keys are kept apart until ages are known. */
export const agesKey = (instrument: Instrument): string => (instrument.ages === undefined ? "" : `${instrument.ages.from ?? ""}|${instrument.ages.below ?? ""}`)

/** The ages of a key made by {@link agesKey}; undefined for every age. */
export const agesOfKey = (key: string): { readonly from: number | null; readonly below: number | null } | undefined => {
  if (key === "") return undefined
  const [from, below] = key.split("|") as [string, string]
  return { from: from === "" ? null : Number(from), below: below === "" ? null : Number(below) }
}

/**
 * A unit as written → a comparable form: UCUM codes are case-sensitive, but exports also write a
 * unit's text ("kg/m^2", "kg/m²", "mmol/mol ", "%"), so spaces go, powers lose their caret or
 * superscript and letters are compared in lower case (no UCUM unit the model names differs from
 * another only by case).
 */
const unitForm = (unit: string) => unit.replace(/\s+/g, "").replace(/\^/g, "").replace(/²/g, "2").replace(/³/g, "3").toLowerCase()

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
  // Each instrument's unit and conversions by their comparable form, made once (scoring runs per observation).
  const unitIndex = new Map<Instrument, { readonly own: string; readonly from: ReadonlyMap<string, { readonly factor: number; readonly offset: number }> }>()
  for (const i of file.instruments) {
    if (i.unit !== undefined) unitIndex.set(i, { own: unitForm(i.unit.ucum), from: new Map(Object.entries(i.unit.from ?? {}).map(([u, c]) => [unitForm(u), c] as const)) })
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
    const given = value.quantity ?? numberIn(value.text)
    if (given === undefined) return "no_value"
    let v = given
    const units = unitIndex.get(instrument)
    if (units !== undefined && value.unit !== undefined && value.unit.trim() !== "") {
      const form = unitForm(value.unit)
      if (form !== units.own) {
        const conversion = units.from.get(form)
        if (conversion === undefined) return "unknown_unit"
        v = given * conversion.factor + conversion.offset
      }
    }
    if (t.type === "bands") {
      for (const b of t.bands) if (v < b.below) return b.score
      return t.otherwise
    }
    const [lo, hi] = t.range
    const [validLo, validHi] = t.valid ?? t.range
    if (v < validLo || v > validHi) return "out_of_range"
    const share = (Math.min(hi, Math.max(lo, v)) - lo) / (hi - lo)
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
