/**
 * A source's codings → a Concept of one vocabulary kind, through the shipped concept maps
 * (src/health/ConceptMaps.ts) and the service's own code systems (`urn:hcc:vocabulary:<kind>`,
 * written by `hcc data export --format fhir`). Unmapped codes are kept with their standard code
 * and named from their display (nameOf).
 */
import { lookup, type MapKind, ingredientsNamedIn } from "../health/ConceptMaps.ts"
import { SNAKE_CASE, systemOfFhirUri } from "../plugin/codeSystems.ts"
import type { Concept, DeviceEvent, SourceCoding } from "./facts.ts"

export type { SourceCoding }

/** The service's own code system of a vocabulary kind (its codes are the dataset's codes). */
export const ownSystem = (kind: string): string => `urn:hcc:vocabulary:${kind}`


/** A coding's system as a short name (codeSystems.ts), else as written, or null. */
export const systemName = (system: string | undefined): string | null =>
  system === undefined ? null : systemOfFhirUri(system) ?? system

/**
 * The concept of a kind that codings (and a text) name: the first coding in the service's own
 * system wins; then every coding the map knows; drugs also by the ingredients an RxNorm display
 * names. Unmapped: the first coding of a known system (else the first coding, else the text) is kept.
 */
export const conceptOf = (kind: MapKind, codings: ReadonlyArray<SourceCoding>, text?: string): Concept => {
  const own = ownSystem(kind)
  for (const c of codings) {
    if (c.system === own && c.code !== undefined && SNAKE_CASE.regex.test(c.code)) {
      const standard = codings.find((x) => x !== c && x.code !== undefined && systemOfFhirUri(x.system) !== undefined)
      return { targets: [c.code], system: systemName(standard?.system), code: standard?.code ?? null, display: c.display ?? text ?? c.code }
    }
  }
  const targets: Array<string> = []
  for (const c of codings) {
    const system = systemName(c.system)
    if (system === null || c.code === undefined) continue
    for (const e of lookup(kind, { system, code: c.code })) if (!targets.includes(e.target)) targets.push(e.target)
  }
  if (targets.length === 0 && kind === "drug") {
    for (const c of codings) {
      if (systemName(c.system) !== "rxnorm") continue
      for (const t of ingredientsNamedIn(c.display ?? "")) if (!targets.includes(t)) targets.push(t)
    }
    if (targets.length === 0 && text !== undefined) targets.push(...ingredientsNamedIn(text))
  }
  const known = codings.find((c) => c.code !== undefined && systemOfFhirUri(c.system) !== undefined) ?? codings.find((c) => c.code !== undefined)
  return {
    targets,
    system: systemName(known?.system),
    code: known?.code ?? null,
    display: known?.display ?? text ?? known?.code ?? ""
  }
}

/** Why a condition coded as social history or a care situation (social_history map) is no diagnosis; the note it is counted under. */
export const SOCIAL_HISTORY_NOTE = "recording social history or a care situation (e.g. employment, stress, medication review due), not a diagnosis: left out"

/**
 * Whether a condition's codings record social history rather than a diagnosis: one of them is in
 * the social_history map and none is in the condition map (a code both take stays a condition).
 */
export const isSocialHistory = (codings: ReadonlyArray<SourceCoding>, concept: Concept): boolean =>
  concept.targets.length === 0 && codings.some((c) => {
    const system = systemName(c.system)
    return system !== null && c.code !== undefined && lookup("social_history", { system, code: c.code }).length > 0
  })

/** The implant category (device map) codings name: the service's own code first, else the first a map entry takes; null when none. */
export const deviceCategoryOf = (codings: ReadonlyArray<SourceCoding>): string | null => {
  const own = codings.find((c) => c.system === ownSystem("device") && c.code !== undefined)?.code
  if (own !== undefined) return own
  for (const c of codings) {
    const system = systemName(c.system)
    if (system === null || c.code === undefined) continue
    const hit = lookup("device", { system, code: c.code })[0]
    if (hit !== undefined) return hit.target
  }
  return null
}

/** The device events (device_metric map) codings name: revisions, complications, infections, failures. */
export const deviceEventsOf = (codings: ReadonlyArray<SourceCoding>): ReadonlyArray<DeviceEvent> => {
  const out: Array<DeviceEvent> = []
  for (const c of codings) {
    const system = systemName(c.system)
    if (system === null || c.code === undefined) continue
    for (const e of lookup("device_metric", { system, code: c.code })) {
      if (!out.some((o) => o.metric === e.target)) out.push({ metric: e.target, devices: e.applies_to ?? [] })
    }
  }
  return out
}

/** SNOMED CT's semantic tag at the end of a fully specified name: "(disorder)", "(finding)", … */
const SEMANTIC_TAG = / \((disorder|finding|procedure|situation|event|physical object|substance|product|medicinal product|clinical drug|observable entity|regime\/therapy|qualifier value|morphologic abnormality)\)$/

/** A display without its SNOMED CT semantic tag, for labels. */
export const labelOf = (display: string): string => display.replace(SEMANTIC_TAG, "").trim()

/** The longest code a name may be. */
const NAME_LENGTH = 64

/** A text as the words of a code: lower case, accents dropped, runs of other characters as one `_`. */
const slugOf = (text: string): string =>
  text.normalize("NFKD").replace(/[\u0300-\u036f]/g, "").toLowerCase().replace(/[^a-z0-9]+/g, "_").replace(/^_+|_+$/g, "")

/** A name cut to `length` characters at a word (`_`) when one is near enough, else where it falls. */
const cutAt = (name: string, length: number): string => {
  if (name.length <= length) return name
  const cut = name.slice(0, length)
  const at = cut.lastIndexOf("_")
  return at > 8 ? cut.slice(0, at) : cut
}

/**
 * The snake_case code an unmapped concept gets from its display: lower case, runs of other
 * characters as one `_`, at most 64 characters (cut at a word), starting with a letter (`x_` is
 * put before a leading digit). "Acute bronchitis (disorder)" → acute_bronchitis.
 */
export const nameOf = (display: string): string => {
  let name = slugOf(labelOf(display))
  if (name === "") name = "unnamed"
  if (!/^[a-z]/.test(name)) name = `x_${name}`
  return cutAt(name, NAME_LENGTH)
}

/** A name with a suffix that always survives the length limit: the name is cut to leave room for it. */
const withSuffix = (name: string, suffix: string): string =>
  `${cutAt(name, NAME_LENGTH - suffix.length - 1).replace(/_+$/, "")}_${suffix}`

/**
 * Unique codes for unmapped concepts, per vocabulary kind, in time linear in the concepts named:
 * a concept's name from its display when no other entry has it; else that name with its system
 * and code appended; else with the first free number from 2 up. The number tried next is kept per
 * name, so n concepts that share one display cost O(n) look-ups, not O(n²), and a suffix is never
 * cut off by the length limit (a name cut to 64 characters stays distinct).
 */
export class UniqueNames {
  private readonly taken = new Set<string>()
  private readonly nextNumber = new Map<string, number>()
  /** How many times a name was looked up (for tests of the bound above). */
  lookups = 0

  private has(kind: string, name: string): boolean {
    this.lookups++
    return this.taken.has(`${kind}|${name}`)
  }

  /** Marks a code of a kind as taken (the mapped targets, named by the maps). */
  take(kind: string, code: string): void {
    this.taken.add(`${kind}|${code}`)
  }

  /** A new code of `kind` for an unmapped concept with this display, system and code. */
  name(kind: string, display: string, system: string | null, code: string | null): string {
    const base = nameOf(display)
    let name = base
    if (this.has(kind, name)) {
      const qualifier = slugOf(`${system ?? ""} ${code ?? ""}`).slice(-(NAME_LENGTH / 2)).replace(/^_+/, "")
      name = qualifier === "" ? base : withSuffix(base, qualifier)
      if (name === base || this.has(kind, name)) {
        const key = `${kind}|${base}`
        let i = this.nextNumber.get(key) ?? 2
        while (this.has(kind, name = withSuffix(base, String(i)))) i++
        this.nextNumber.set(key, i + 1)
      }
    }
    this.take(kind, name)
    return name
  }
}
