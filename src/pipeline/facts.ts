/**
 * What an importer reads out of a source, whatever its format: FHIR resources and OMOP rows both
 * become these facts, which the staging store collects and turns into the dataset's tables
 * (Staging.ts). Plain data (a compute thread may make them). Days are day numbers (calendar.ts),
 * patients and other references the source's own ids, resolved by the staging store.
 */
import type { Sex } from "../plugin/vocabularies.ts"

/** One coding as a source gives it. */
export interface SourceCoding {
  readonly system?: string | undefined
  readonly code?: string | undefined
  readonly display?: string | undefined
}

/** A coded concept: the service's codes it maps to, and the standard code and name it came with. */
export interface Concept {
  /** The vocabulary codes it maps to (a combination drug maps to each of its ingredients); empty when unmapped. */
  readonly targets: ReadonlyArray<string>
  /** The code's system (a short name of codeSystems.ts, else its URI), or null for text alone. */
  readonly system: string | null
  readonly code: string | null
  /** What to call it when it is not mapped (its display, else its text, else its code). */
  readonly display: string
}

/** An event after an implant that counts towards a rate metric (device_metric map). */
export interface DeviceEvent {
  readonly metric: string
  /** The device categories it concerns. */
  readonly devices: ReadonlyArray<string>
}

/** The encounter kinds of the dataset. */
export type EncounterKind = "outpatient" | "emergency" | "inpatient"

/** One fact of the source. `src` is the source's id of the record (FHIR `id`, OMOP key), kept in source_ids. */
export type Fact =
  | {
    readonly k: "patient"
    readonly src: string
    readonly identifiers: ReadonlyArray<string>
    /** null: the source does not say (FHIR allows it): the patient is left out with all that is about them. */
    readonly birthYear: number | null
    readonly sex: Sex
    readonly region: string
    readonly death: number | null
  }
  | { readonly k: "organization"; readonly src: string; readonly identifiers: ReadonlyArray<string>; readonly region: string; readonly name: string }
  | { readonly k: "condition"; readonly patient: string; readonly concept: Concept; readonly day: number | null; readonly events: ReadonlyArray<DeviceEvent> }
  | {
    readonly k: "encounter"
    readonly src: string
    readonly patient: string
    /** null: a class the encounter-class map does not take (counted, left out). */
    readonly kind: EncounterKind | null
    readonly cls: string
    readonly start: number
    /** null: still going on (an in-progress stay), so it lasts to as_of. */
    readonly end: number | null
    readonly org: string | null
  }
  | { readonly k: "course"; readonly src: string; readonly patient: string; readonly drug: Concept; readonly start: number; readonly end: number | null; readonly adherence: number | null }
  | {
    /** What a source states about a course read before or after it (OMOP: an observation linked to the DRUG_EXPOSURE row). */
    readonly k: "course_detail"
    /** The course's source id as its own record gives it (`<type>/<src>`, e.g. `drug_exposure/12`). */
    readonly course: string
    readonly adherence: number | null
    /** The course had not ended at as_of (its end date in the source is a stand-in). */
    readonly ongoing: boolean
  }
  | {
    /** A fill: a dispensing (or pharmacy claim) with a supply; exposure from its day to its end, and adherence's evidence. */
    readonly k: "dispense"
    readonly src: string
    readonly patient: string
    readonly drug: Concept
    readonly day: number
    readonly days: number
    /** Its last day when the source states one (OMOP's drug_exposure_end_date), else day + days − 1. */
    readonly end: number | null
  }
  | { readonly k: "adverse"; readonly src: string; readonly patient: string; readonly drug: Concept; readonly event: Concept; readonly day: number }
  | {
    readonly k: "procedure"
    readonly src: string
    readonly patient: string
    /** The implant category its code maps to (device map), or null. */
    readonly device: string | null
    /** Devices it names (FHIR focalDevice / usedReference): their type may make it an implant. */
    readonly deviceRefs: ReadonlyArray<string>
    readonly day: number
    readonly org: string | null
    readonly encounter: string | null
    readonly events: ReadonlyArray<DeviceEvent>
  }
  | { readonly k: "device"; readonly src: string; readonly patient: string | null; readonly device: string | null; readonly concept: Concept }
  | {
    readonly k: "scores"
    readonly patient: string
    readonly month: number
    /** The observation's day (for as_of). */
    readonly day: number
    /** Direct axis observations win over instruments within a month. */
    readonly direct: boolean
    /** Per axis (AXES order): the sum and the number of the 0–10 scores the observation gave. */
    readonly sums: ReadonlyArray<number>
    readonly counts: ReadonlyArray<number>
    /** The ages (the month's year minus the year of birth) these scores apply to: from ≤ age < below; absent, every age. */
    readonly ages?: { readonly from: number | null; readonly below: number | null }
  }
  | { readonly k: "outcome"; readonly implant: string; readonly metric: string; readonly value: number }
  /** An era the source derived itself (OMOP DRUG_ERA, CONDITION_ERA): compared with the import's own, never stored. */
  | { readonly k: "source_era"; readonly table: "drug_era" | "condition_era"; readonly patient: string; readonly concept: Concept; readonly start: number; readonly end: number }
  /** An OMOP observation period: its last day ends follow-up, and an ongoing drug exposure it holds. */
  | { readonly k: "observed"; readonly patient: string; readonly start: number | null; readonly end: number }
  | { readonly k: "medication"; readonly src: string; readonly identifiers: ReadonlyArray<string>; readonly codings: ReadonlyArray<SourceCoding>; readonly text: string | null }
  | {
    /** A vocabulary entry the source declares (its code, label and standard code), used or not. */
    readonly k: "vocabulary"
    readonly kind: string
    readonly code: string
    readonly label: string
    readonly system: string | null
    readonly standard: string | null
  }

/** A problem with one record: where in it (a path such as `Condition.subject`) and why. */
export interface Problem {
  readonly path: string
  readonly reason: string
}

/** What mapping one record gives. */
export interface Mapped {
  readonly facts: ReadonlyArray<Fact>
  readonly problems: ReadonlyArray<Problem>
  /** Counted in the summary: things read but left out on purpose, by reason. */
  readonly notes?: ReadonlyArray<string>
}
