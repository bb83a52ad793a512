/**
 * How a one-health answer is drawn (src/plugin/view.ts), from the view representation's
 * `view_data`: both weekly series on one time axis — the animal one shifted by the lag found, so a
 * lead shows as the two moving together — and the correlation the search saw at each lag, the
 * lag found marked and the permutation test's threshold drawn across; the finding, the lag and the
 * alert in the title. A week whose human count is withheld (a small cell) is a grey band across
 * the plot, said in a title line; the host's subtitle names the rule and its threshold.
 */
import type { PluginView } from "../../src/plugin/contract.ts"

export const view: PluginView = {
  version: 1,
  data: {
    weeks: { from: "/answer/view_data/weeks", rows: "items" },
    correlation: { from: "/answer/view_data/correlation", rows: "items" },
    meta: { from: "/answer/view_data", rows: "object" },
    result: { from: "/answer", rows: "object" },
    asked: { from: "/request", rows: "object" },
    suppressed: { from: "/answer/view_data/suppressed", rows: "values" }
  },
  spec: {
    description:
      "Weekly human and {/request/animal_species} cases in {/request/geographic_scope}, the animal series shifted by the lag found ({/answer/temporal_lag}, r = {/answer/correlation_strength|.2}), " +
      "and the correlation at each lag; alert {/answer/alert_level}, zoonotic risk {/answer/zoonotic_risk}.",
    title: {
      // Title and subtitle as two lines of one title (Vega-Lite's schema takes an expression for the text only).
      text: { expr: "['Animal series leading the human one: ' + (result.correlation_found ? 'found' : 'not found'), 'Lag ' + replace(result.temporal_lag, '_', ' ') + ' (r = ' + format(result.correlation_strength, '.2f') + '); alert ' + result.alert_level + ', zoonotic risk ' + result.zoonotic_risk]" }
    },
    vconcat: [
      {
        title: {
          text: {
            expr: "slice(['Weekly cases: human, and ' + asked.animal_species + ' shifted ' + (isValid(meta.lag_weeks) ? meta.lag_weeks : 0) + ' weeks later', " +
              "'Grey: a week whose human count is withheld'], 0, length(suppressed) > 0 ? 2 : 1)"
          },
          fontSize: 12
        },
        data: { name: "weeks" },
        width: 480,
        height: 160,
        layer: [
          {
            // One grey band per week whose human count is withheld, beneath the lines.
            transform: [
              // Withheld, not unreported: the view data lists the week's human count among its suppressed fields.
              { window: [{ op: "row_number", as: "row" }] },
              { filter: "datum.human === null && indexof(pluck(suppressed, 'value'), '/view_data/weeks/' + (datum.row - 1) + '/human') >= 0" },
              { calculate: "toDate(datum.week)", as: "date" },
              { calculate: "utcOffset('week', datum.date, 1)", as: "until" },
              { calculate: "'withheld (small cell)'", as: "human_cases" }
            ],
            mark: { type: "rect", color: "#888", opacity: 0.3 },
            encoding: {
              x: { field: "date", type: "temporal", scale: { type: "utc" } },
              x2: { field: "until" },
              y: { value: 0 },
              y2: { value: "height" },
              tooltip: [{ field: "week", type: "nominal", title: "week" }, { field: "human_cases", type: "nominal", title: "human cases" }]
            }
          },
          {
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
            mark: { type: "line", strokeWidth: 1.5, point: { size: 12 } },
            encoding: {
              x: { field: "date", type: "temporal", scale: { type: "utc" }, title: "Week" },
              y: { field: "cases", type: "quantitative", title: "Cases per week" },
              color: { field: "label", type: "nominal", title: "Series" },
              detail: { field: "stretch", type: "nominal" },
              tooltip: [{ field: "week", type: "nominal", title: "week (unshifted)" }, { field: "label", type: "nominal", title: "series" }, { field: "cases", type: "quantitative" }]
            }
          }
        ]
      },
      {
        // The threshold's key as a title line: a label inside the plot would sit on the bars.
        title: { text: ["Correlation of the prewhitened series by lag", "Dashed: the lead threshold (permutation test, α = 0.05); red: the lag found"], fontSize: 12 },
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
            encoding: { y: { field: "threshold", type: "quantitative" }, tooltip: [{ field: "threshold", type: "quantitative", format: ".3f", title: "lead threshold (r)" }] }
          }
        ]
      }
    ]
  }
}
