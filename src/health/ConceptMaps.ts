/**
 * The shipped concept maps (src/health/concepts/*.json, docs/data.md "Concept maps"): standard
 * codes → the service's vocabulary. The importers map what they read through them, a request may
 * name a condition, drug or device by a standard code they know, and the generated dataset's
 * vocabulary carries each entry's primary standard code from them. Every entry names its source.
 */
import adverseEvent from "./concepts/adverse_event.json" with { type: "json" }
import condition from "./concepts/condition.json" with { type: "json" }
import device from "./concepts/device.json" with { type: "json" }
import deviceMetric from "./concepts/device_metric.json" with { type: "json" }
import drug from "./concepts/drug.json" with { type: "json" }
import encounterClass from "./concepts/encounter_class.json" with { type: "json" }
import socialHistory from "./concepts/social_history.json" with { type: "json" }
import zoonoticCondition from "./concepts/zoonotic_condition.json" with { type: "json" }
import type { StandardCode } from "../plugin/codeSystems.ts"

/** One map entry: a standard code (or, with `match: prefix`, a code category) → a target code. */
export interface ConceptEntry {
  readonly target: string
  readonly system: string
  readonly code: string
  /**
   * `prefix`: the code and every code it is the category of (dots ignored: E11 covers E11.65 and
   * E1165). `except`: the code and every code it is the category of are *not* the target, though a
   * wider category of the target's contains them (ICD-10-CM E66.3 overweight under E66).
   */
  readonly match?: string
  /** The standard code the catalog lists for the target (at most one per target). */
  readonly primary?: boolean
  /** For device events: the device categories the entry concerns. */
  readonly applies_to?: ReadonlyArray<string>
  readonly display: string
  readonly source: string
}

/** One map file. */
export interface ConceptMap {
  readonly kind: string
  readonly description: string
  readonly entries: ReadonlyArray<ConceptEntry>
}

/** Every shipped map by the kind of its targets. */
export const CONCEPT_MAPS = {
  condition,
  drug,
  device,
  device_metric: deviceMetric,
  adverse_event: adverseEvent,
  zoonotic_condition: zoonoticCondition,
  encounter_class: encounterClass,
  social_history: socialHistory
} as const satisfies Record<string, ConceptMap>

/** The kinds of map. */
export type MapKind = keyof typeof CONCEPT_MAPS

const undotted = (code: string) => code.replaceAll(".", "").toUpperCase()

/** Per kind: exact entries by `system|CODE`, prefix and except entries by system. */
const index = Object.fromEntries(
  Object.entries(CONCEPT_MAPS).map(([kind, map]) => {
    const exact = new Map<string, Array<ConceptEntry>>()
    const prefix = new Map<string, Array<ConceptEntry>>()
    const except = new Map<string, Array<ConceptEntry>>()
    for (const e of map.entries as ReadonlyArray<ConceptEntry>) {
      if (e.match === "prefix" || e.match === "except") {
        const by = e.match === "prefix" ? prefix : except
        by.set(e.system, [...(by.get(e.system) ?? []), e])
      } else {
        const key = `${e.system}|${e.code.toUpperCase()}`
        exact.set(key, [...(exact.get(key) ?? []), e])
      }
    }
    return [kind, { exact, prefix, except }]
  })
) as unknown as Record<MapKind, { readonly [K in "exact" | "prefix" | "except"]: ReadonlyMap<string, ReadonlyArray<ConceptEntry>> }>

/**
 * Every entry of a kind that a standard code matches: exact entries, then categories that contain
 * it, except a category's target where an `except` entry of that target contains the code.
 */
export const lookup = (kind: MapKind, code: StandardCode): ReadonlyArray<ConceptEntry> => {
  const { exact, except, prefix } = index[kind]
  const hits = [...(exact.get(`${code.system}|${code.code.toUpperCase()}`) ?? [])]
  const plain = undotted(code.code)
  const exceptions = except.get(code.system)
  for (const e of prefix.get(code.system) ?? []) {
    if (plain.startsWith(undotted(e.code)) && exceptions?.some((x) => x.target === e.target && plain.startsWith(undotted(x.code))) !== true) hits.push(e)
  }
  return hits
}

/** The first target a standard code maps to, or undefined. */
export const targetOf = (kind: MapKind, code: StandardCode): string | undefined => lookup(kind, code)[0]?.target

/** The primary standard code of a target, or undefined when the map gives it none. */
export const primaryCodeOf = (kind: MapKind, target: string): StandardCode | undefined => {
  const e = (CONCEPT_MAPS[kind].entries as ReadonlyArray<ConceptEntry>).find((x) => x.target === target && x.primary === true)
  return e === undefined ? undefined : { system: e.system, code: e.code }
}

/** The drug map's ingredients by lower-case name (the display of each primary RxNorm entry). */
const ingredients = (drug.entries as ReadonlyArray<ConceptEntry>).filter((e) => e.primary === true).map((e) => ({ name: e.display.toLowerCase(), target: e.target }))

/**
 * The mapped ingredients a drug's display names as whole words (RxNorm normalized names start from
 * their ingredients; a combination names several), in the order they appear. Empty when none.
 */
export const ingredientsNamedIn = (display: string): ReadonlyArray<string> => {
  const words = display.toLowerCase()
  const found: Array<{ readonly at: number; readonly target: string }> = []
  for (const { name, target } of ingredients) {
    const at = new RegExp(`(^|[^a-z])${name}([^a-z]|$)`).exec(words)
    if (at !== null) found.push({ at: at.index, target })
  }
  return found.sort((a, b) => a.at - b.at).map((f) => f.target)
}
