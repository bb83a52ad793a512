/**
 * How a one-health answer is drawn (src/plugin/view.ts), from the view representation's
 * `view_data`: both weekly series on one time axis — the animal one shifted by the lag found, so a
 * lead shows as the two moving together — and the correlation the search saw at each lag, the
 * lag found marked and the permutation test's threshold drawn across; the finding, the lag and the
 * alert in the title.
 */
import type { PluginView } from "../../src/plugin/contract.ts"

export const view: PluginView = {
  version: 1,
  data: {
    weeks: { from: "/answer/view_data/weeks", rows: "items" },
    correlation: { from: "/answer/view_data/correlation", rows: "items" },
    meta: { from: "/answer/view_data", rows: "object" },
    result: { from: "/answer", rows: "object" },
    asked: { from: "/request", rows: "object" }
  },
  spec: {
    title: {
      // Title and subtitle as two lines of one title (Vega-Lite's schema takes an expression for the text only).
      text: { expr: "['Animal series leading the human one: ' + (result.correlation_found ? 'found' : 'not found'), 'Lag ' + replace(result.temporal_lag, '_', ' ') + ' (r = ' + format(result.correlation_strength, '.2f') + '); alert ' + result.alert_level + ', zoonotic risk ' + result.zoonotic_risk]" }
    },
    vconcat: [
      {
        title: { text: { expr: "'Weekly cases: human, and ' + asked.animal_species + ' shifted ' + (isValid(meta.lag_weeks) ? meta.lag_weeks : 0) + ' weeks later'" }, fontSize: 12 },
        data: { name: "weeks" },
        width: 480,
        height: 160,
        transform: [
          { fold: ["animal", "human"], as: ["series", "cases"] },
          { calculate: "datum.series === 'animal' ? utcOffset('week', toDate(datum.week), isValid(meta.lag_weeks) ? meta.lag_weeks : 0) : toDate(datum.week)", as: "date" },
          { calculate: "datum.series === 'animal' ? asked.animal_species + ' (shifted by the lag)' : 'human'", as: "label" },
          // A week without a figure (no report, or a small cell) breaks its line: each stretch
          // between gaps is its own line (Vega-Lite 5 and 6 alike).
          { calculate: "isValid(datum.cases) ? 0 : 1", as: "gap" },
          { window: [{ op: "sum", field: "gap", as: "stretch" }], groupby: ["series"], sort: [{ field: "week" }] },
          { filter: "isValid(datum.cases)" }
        ],
        mark: { type: "line", strokeWidth: 1.5 },
        encoding: {
          x: { field: "date", type: "temporal", scale: { type: "utc" }, title: "Week" },
          y: { field: "cases", type: "quantitative", title: "Cases per week" },
          color: { field: "label", type: "nominal", title: "Series" },
          detail: { field: "stretch", type: "nominal" }
        }
      },
      {
        title: { text: "Correlation of the prewhitened series by lag", fontSize: 12 },
        width: 480,
        height: 140,
        layer: [
          {
            data: { name: "correlation" },
            mark: "bar",
            encoding: {
              x: { field: "lag_days", type: "ordinal", title: "Animal series leading by (days)" },
              y: { field: "r", type: "quantitative", title: "Correlation (r)", scale: { domain: [-1, 1] } },
              color: { condition: { test: "isValid(meta.lag_weeks) && datum.lag_days === meta.lag_weeks * 7", value: "firebrick" }, value: "steelblue" },
              tooltip: [{ field: "lag_days", type: "ordinal", title: "lag (days)" }, { field: "r", type: "quantitative", format: ".3f" }, { field: "pairs", type: "quantitative", title: "weeks" }]
            }
          },
          {
            data: { name: "meta" },
            mark: { type: "rule", strokeDash: [4, 4] },
            encoding: { y: { field: "threshold", type: "quantitative" } }
          },
          {
            data: { name: "meta" },
            mark: { type: "text", align: "left", dy: -6, text: "lead threshold (permutation test, α = 0.05)" },
            encoding: { y: { field: "threshold", type: "quantitative" }, x: { value: 2 } }
          }
        ]
      }
    ]
  }
}
