/**
 * Phase two of the staging (Staging.ts): one fact of a record becomes a row of its table, its
 * patient resolved to an index (a fact about no patient the dataset has is left out and counted,
 * or a problem under `--strict`), its concepts to ids, its dates to the days the data holds.
 */
import { AXES } from "../plugin/axes.ts"
import type { DataDays } from "./DataDays.ts"
import type { DeviceEvent, Fact } from "./facts.ts"
import type { ScratchRows } from "./scratchRows.ts"
import type { StagedConcepts } from "./StagedConcepts.ts"
import type { StagedPatients } from "./stagedRoster.ts"
import type { Origin } from "./stagingTables.ts"

/** What a phase-two fact is written with. */
export interface PhaseTwo {
  readonly rows: ScratchRows
  readonly patients: StagedPatients
  readonly concepts: StagedConcepts
  readonly days: DataDays
}

const events = (t: PhaseTwo, origin: Origin, patient: number, list: ReadonlyArray<DeviceEvent>, day: number): void => {
  for (const e of list) t.rows.row("device_event", origin, [patient, e.metric, e.devices.join(","), day])
}

/** The facts about one patient each, staged once the patient is resolved. */
const ABOUT_A_PATIENT: { readonly [K in Fact["k"]]?: (t: PhaseTwo, origin: Origin, p: number, fact: Extract<Fact, { k: K }>) => void } = {
  condition: (t, origin, p, fact) => {
    t.days.seen(fact.day)
    t.rows.row("condition", origin, [p, t.concepts.idOf("condition", fact.concept)])
    if (fact.day !== null) events(t, origin, p, fact.events, fact.day)
  },
  encounter: (t, origin, p, fact) => {
    t.days.seen(fact.end ?? fact.start, false)
    t.days.event(fact.start)
    t.rows.row("encounter", origin, [fact.src, origin.type, p, fact.kind, fact.cls, fact.start, fact.end, fact.org])
  },
  course: (t, origin, p, fact) => {
    t.days.seen(fact.start)
    t.rows.row("course", origin, [`${origin.type}/${fact.src}`, origin.type, p, t.concepts.idOf("drug", fact.drug), fact.start, fact.end, fact.adherence])
  },
  dispense: (t, origin, p, fact) => {
    t.days.seen(fact.day)
    t.rows.row("dispense", origin, [`${origin.type}/${fact.src}`, p, t.concepts.idOf("drug", fact.drug), fact.day, fact.days, fact.end])
  },
  adverse: (t, origin, p, fact) => {
    t.days.seen(fact.day)
    t.rows.row("adverse", origin, [`${origin.type}/${fact.src}`, origin.type, p, t.concepts.idOf("drug", fact.drug), t.concepts.idOf("adverse_event", fact.event), fact.day])
  },
  procedure: (t, origin, p, fact) => {
    t.days.seen(fact.day)
    events(t, origin, p, fact.events, fact.day)
    if (fact.device !== null || fact.deviceRefs.length > 0) {
      t.rows.row("procedure", origin, [fact.src, origin.type, p, fact.device, JSON.stringify(fact.deviceRefs), fact.day, fact.org, fact.encounter])
    }
  },
  scores: (t, origin, p, fact) => {
    t.days.seen(fact.day)
    const values: Array<number | null> = [p, fact.month, fact.direct ? 1 : 0, fact.ages?.from ?? null, fact.ages?.below ?? null]
    for (let a = 0; a < AXES.length; a++) values.push(fact.counts[a]! > 0 ? fact.sums[a]! : null, fact.counts[a]!)
    t.rows.row("scores", origin, values)
  },
  source_era: (t, origin, p, fact) => {
    t.rows.row("source_era", origin, [fact.table, p, t.concepts.idOf(fact.table === "drug_era" ? "drug" : "condition", fact.concept, true), fact.start, fact.end])
  },
  observed: (t, origin, p, fact) => {
    t.days.seen(fact.end, false)
    t.rows.row("observed", origin, [p, fact.start, fact.end])
  }
}

/** Stages a phase-two fact; false when the fact is not one (phase one's: patients, organizations, vocabulary). */
export const stageFact = (t: PhaseTwo, origin: Origin, fact: Fact): boolean => {
  switch (fact.k) {
    case "course_detail":
      t.rows.row("course_detail", origin, [fact.course, fact.adherence, fact.ongoing ? 1 : 0])
      return true
    case "outcome":
      t.rows.row("outcome", origin, [fact.implant, fact.metric, fact.value])
      return true
    case "device": {
      // A Device need not name its patient; one that names a patient the dataset lacks is left out.
      const p = fact.patient === null ? null : t.patients.of(fact.patient, origin)
      if (p !== undefined) t.rows.row("device", origin, [fact.src, p, fact.device])
      return true
    }
    default: {
      const stage = ABOUT_A_PATIENT[fact.k] as ((t: PhaseTwo, origin: Origin, p: number, fact: Fact) => void) | undefined
      if (stage === undefined) return false
      const p = t.patients.of((fact as { readonly patient: string }).patient, origin)
      if (p !== undefined) stage(t, origin, p, fact)
      return true
    }
  }
}
