/**
 * FHIR Observations → monthly axis scores (docs/data.md, the Observation rule and "The axis
 * model"): the observation's code and each component's code through the axis model; direct axis
 * observations (the model's direct system) kept apart so they win over instruments in their month;
 * the service's own device outcome observations (about an implant Procedure).
 */
import type * as fhir4 from "fhir/r4.js"
import { AXES } from "../../plugin/axes.ts"
import { monthOfDay } from "../../health/calendar.ts"
import { agesKey, agesOfKey, type ObservedValue, unscoredNote } from "../../pipeline/AxisModel.ts"
import { ownSystem, type SourceCoding } from "../../pipeline/concepts.ts"
import type { Fact, Mapped, Problem } from "../../pipeline/facts.ts"
import { codingsOf, type FhirContext, isProblem, problem, referenceId, skip, subjectOf } from "./common.ts"

const OBSERVATION_SKIPPED = new Set(["cancelled", "entered-in-error"])
/** The system of UCUM unit codes (FHIR R4 Quantity.system). */
const UCUM = "http://unitsofmeasure.org"

/** The value of an observation or a component as the axis model reads it, or a Problem when a quantity is not a number. */
const valueOf = (v: fhir4.Observation | fhir4.ObservationComponent, path: string): ObservedValue | Problem => {
  if (v.valueQuantity !== undefined) {
    // Quantity.value is optional (a quantity may carry only a comparator or a unit): no value, counted.
    if (v.valueQuantity.value === undefined || v.valueQuantity.value === null) return {}
    if (typeof v.valueQuantity.value !== "number" || !Number.isFinite(v.valueQuantity.value)) {
      return { path: `${path}.valueQuantity.value`, reason: `${JSON.stringify(v.valueQuantity.value)} is not a number` }
    }
    // The unit: Quantity.code when the system is UCUM (as US Core asks), else whatever the export wrote.
    const q = v.valueQuantity
    const unit = q.system === UCUM && typeof q.code === "string" ? q.code : typeof q.unit === "string" ? q.unit : typeof q.code === "string" ? q.code : undefined
    return { quantity: v.valueQuantity.value, unit }
  }
  if (typeof v.valueInteger === "number") return { quantity: v.valueInteger }
  if (v.valueCodeableConcept !== undefined) return { codings: codingsOf(v.valueCodeableConcept), text: v.valueCodeableConcept.text }
  if (typeof v.valueString === "string") return { text: v.valueString }
  if (typeof v.valueBoolean === "boolean") return { text: v.valueBoolean ? "Yes" : "No" }
  return {}
}

/** Maps one Observation. */
export const observation = (r: fhir4.Observation, ctx: FhirContext): Mapped => {
  if (OBSERVATION_SKIPPED.has(r.status)) return skip(`Observation with status ${r.status}: left out`)
  const model = ctx.axisModel
  const metricSystem = ownSystem("device_metric")
  const parts: Array<{ readonly codings: ReadonlyArray<SourceCoding>; readonly node: fhir4.Observation | fhir4.ObservationComponent; readonly path: string }> = [
    { codings: codingsOf(r.code), node: r, path: "Observation" },
    ...(Array.isArray(r.component) ? r.component : []).map((c, i) => ({ codings: codingsOf(c?.code), node: c, path: `Observation.component[${i}]` }))
  ]
  // The cheap test first: most observations of an EHR export inform no axis.
  const relevant = parts.some((p) => p.codings.some((c) => c.system === model.directSystem || c.system === metricSystem || model.instrumentsOf(c.system, c.code).length > 0))
  if (!relevant) return skip("Observation the axis model does not use: left out")
  if (r.subject?.reference !== undefined && !/(^|\/)Patient\/|^urn:uuid:|^Patient\?/.test(r.subject.reference)) return skip("Observation about something other than a patient: left out")
  const patientId = subjectOf(r.subject, "Observation.subject")
  if (isProblem(patientId)) return { facts: [], problems: [patientId] }
  const when = r.effectiveDateTime ?? r.effectivePeriod?.start ?? r.effectiveInstant ?? r.issued
  const day = ctx.day(when, r.effectiveDateTime !== undefined ? "Observation.effectiveDateTime" : r.effectivePeriod?.start !== undefined ? "Observation.effectivePeriod.start" : r.effectiveInstant !== undefined ? "Observation.effectiveInstant" : "Observation.issued")
  if (day === undefined) return problem("Observation.effective[x]", "is required (the month the score belongs to)")
  if (isProblem(day)) return { facts: [], problems: [day] }
  const facts: Array<Fact> = []
  const problems: Array<Problem> = []
  const notes: Array<string> = []
  // Instruments' scores, kept apart by the ages they apply to (known once the patient's is).
  const byAges = new Map<string, { readonly sums: Float64Array; readonly counts: Int32Array }>()
  let direct = false
  const directSums = new Float64Array(AXES.length)
  const directCounts = new Int32Array(AXES.length)
  for (const part of parts) {
    // One value counts once per instrument, however many of the part's codings name it.
    const counted = new Set<unknown>()
    for (const c of part.codings) {
      if (c.system === model.directSystem) {
        const axis = model.directAxis(c.code)
        if (axis === undefined) continue
        const v = valueOf(part.node, part.path)
        if (isProblem(v)) {
          problems.push(v)
          continue
        }
        if (v.quantity === undefined || v.quantity < 0 || v.quantity > 10) {
          problems.push({ path: `${part.path}.value[x]`, reason: `a direct ${axis} score must be a number in [0, 10], got ${JSON.stringify(v.quantity ?? null)}` })
          continue
        }
        const a = AXES.indexOf(axis)
        directSums[a]! += v.quantity
        directCounts[a]!++
        direct = true
      } else if (c.system === metricSystem && c.code !== undefined) {
        const implant = referenceId(r.focus?.[0], "Procedure", "Observation.focus")
        const v = valueOf(part.node, part.path)
        if (implant === undefined || isProblem(implant)) {
          problems.push(isProblem(implant) ? implant : { path: "Observation.focus", reason: "a device outcome needs the implant Procedure it is about" })
        } else if (isProblem(v) || v.quantity === undefined) {
          problems.push(isProblem(v) ? v : { path: `${part.path}.value[x]`, reason: "a device outcome needs a number" })
        } else {
          facts.push({ k: "outcome", implant, metric: c.code, value: v.quantity })
        }
      } else {
        for (const instrument of model.instrumentsOf(c.system, c.code)) {
          if (counted.has(instrument)) continue
          counted.add(instrument)
          const v = valueOf(part.node, part.path)
          if (isProblem(v)) {
            problems.push(v)
            continue
          }
          const score = model.score(instrument, v)
          if (typeof score === "string") {
            notes.push(unscoredNote(instrument, score))
            continue
          }
          const key = agesKey(instrument)
          let acc = byAges.get(key)
          if (acc === undefined) byAges.set(key, acc = { sums: new Float64Array(AXES.length), counts: new Int32Array(AXES.length) })
          const a = AXES.indexOf(instrument.axis)
          acc.sums[a]! += score
          acc.counts[a]!++
        }
      }
    }
  }
  if (problems.length > 0) return { facts: [], problems }
  const month = monthOfDay(day)
  if (direct) facts.push({ k: "scores", patient: patientId, month, day, direct: true, sums: Array.from(directSums), counts: Array.from(directCounts) })
  for (const [key, { sums, counts }] of byAges) {
    const ages = agesOfKey(key)
    facts.push({ k: "scores", patient: patientId, month, day, direct: false, sums: Array.from(sums), counts: Array.from(counts), ...(ages === undefined ? {} : { ages }) })
  }
  return { facts, problems: [], notes }
}

