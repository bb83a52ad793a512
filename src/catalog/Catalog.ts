/** Builds the catalog (docs/api.md, "Platform endpoints") from the live registry: loaded domains, their costs and vocabularies. */
import { AXES, AXIS_NAMES, AXIS_SCORE_RANGE } from "../plugin/axes.ts"
import type { DisclosureSettings } from "../plugin/disclosure.ts"
import type { LoadedPlugin } from "../plugin/PluginRegistry.ts"
import { QUERY_TYPES, TIME_RANGES } from "../plugin/vocabularies.ts"
import { TIER_LIMITS, TIERS } from "../metering/Tiers.ts"
import type { CatalogResponse } from "./CatalogSchema.ts"

/** The catalog body for this set of plugins. Computed once at start; the registry does not change while serving. */
export const buildCatalog = (plugins: ReadonlyArray<LoadedPlugin>, version: string, disclosure: DisclosureSettings): typeof CatalogResponse.Type => {
  const vocabularies: Record<string, Array<string>> = {
    axis: [...AXES],
    query_type: [...QUERY_TYPES],
    time_range: [...TIME_RANGES]
  }
  for (const { plugin } of plugins) {
    for (const [name, values] of Object.entries(plugin.vocabularies ?? {})) {
      const list = (vocabularies[name] ??= [])
      for (const v of values) if (!list.includes(v)) list.push(v)
    }
  }
  return {
    axes: [...AXES],
    domains: plugins.map(({ plugin }) => plugin.name),
    query_types: [...QUERY_TYPES],
    supported_time_ranges: [...TIME_RANGES],
    version,
    axis_details: AXES.map((code) => ({ code, name: AXIS_NAMES[code] })),
    axis_score_range: [AXIS_SCORE_RANGE[0], AXIS_SCORE_RANGE[1]],
    endpoints: plugins.map(({ plugin }) => ({
      domain: plugin.name,
      method: "POST",
      path: plugin.path,
      hcc_cost: plugin.hcc_cost,
      summary: plugin.summary,
      experimental: plugin.experimental === true
    })),
    vocabularies,
    standard_codes: {},
    tiers: TIERS.map((t) => ({
      name: TIER_LIMITS[t].title,
      daily_limit: TIER_LIMITS[t].daily ?? null,
      burst_per_minute: TIER_LIMITS[t].burst
    })),
    // Filled in once the dataset is loaded (PlatformHandlers).
    dataset: null,
    disclosure: { min_cell_size: disclosure.minimum, count_rounding: disclosure.rounding },
    hcc_cost: 0
  }
}
