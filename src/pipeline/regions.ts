/**
 * Where a patient or an organization is → the dataset's region (src/health/concepts/region.json,
 * docs/data.md "Regions"): a US address by state to its Census region, any other by country to its
 * UN M49 sub-region. `hcc data import --region-map <file>` replaces the mapping (same layout).
 */
import * as Schema from "effect/Schema"
import { SNAKE_CASE } from "../plugin/codeSystems.ts"
import shipped from "../health/concepts/region.json" with { type: "json" }

const RegionCode = Schema.String.check(Schema.isPattern(SNAKE_CASE.regex))

/** The layout of a region map file. */
export const RegionMapFile = Schema.Struct({
  description: Schema.optionalKey(Schema.String),
  sources: Schema.optionalKey(Schema.String),
  regions: Schema.Array(Schema.Struct({ code: RegionCode, label: Schema.String })),
  us_states: Schema.Array(Schema.Struct({ code: Schema.String, name: Schema.String, region: RegionCode })),
  countries: Schema.Array(Schema.Struct({ alpha2: Schema.String, alpha3: Schema.String, name: Schema.String, region: RegionCode })),
  fallback: RegionCode
})
/** A region map, as read from its file. */
export type RegionMapFile = typeof RegionMapFile.Type

/** The shipped map. */
export const DEFAULT_REGION_MAP: RegionMapFile = Schema.decodeUnknownSync(RegionMapFile)(shipped)

/** The parts of an address the mapping reads (FHIR Address; OMOP LOCATION). */
export interface AddressParts {
  readonly state?: string | undefined
  readonly country?: string | undefined
}

/** A compiled map: the region of an address, and each region's label. */
export interface RegionMap {
  readonly regionOf: (address: AddressParts | undefined) => string
  readonly labelOf: (code: string) => string
}

const key = (text: string) => text.trim().toLowerCase()

/** Compiles a map; fails with the first region code used but not declared. */
export const compileRegionMap = (file: RegionMapFile): RegionMap => {
  const labels = new Map(file.regions.map((r) => [r.code, r.label]))
  for (const code of [file.fallback, ...file.us_states.map((s) => s.region), ...file.countries.map((c) => c.region)]) {
    if (!labels.has(code)) throw new Error(`region '${code}' is used but not listed in regions`)
  }
  const states = new Map<string, string>()
  for (const s of file.us_states) {
    states.set(key(s.code), s.region)
    states.set(key(s.name), s.region)
  }
  const countries = new Map<string, string>()
  for (const c of file.countries) for (const k of [c.alpha2, c.alpha3, c.name]) countries.set(key(k), c.region)
  const us = new Set(["us", "usa", "united states", "united states of america"])
  return {
    regionOf: (address) => {
      const country = address?.country === undefined ? undefined : key(address.country)
      const state = address?.state === undefined ? undefined : key(address.state)
      if ((country === undefined || us.has(country)) && state !== undefined && states.has(state)) return states.get(state)!
      if (country !== undefined && countries.has(country)) return countries.get(country)!
      return file.fallback
    },
    labelOf: (code) => labels.get(code) ?? code
  }
}
