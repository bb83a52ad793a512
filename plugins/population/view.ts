/**
 * How a population answer is drawn (src/plugin/view.ts): one line per axis over the periods; a
 * withheld mean (a small cell) is a gap in its line, and its period one shaded band (however many
 * of its axes are withheld: one mark per period, never text piled up), explained by a title line
 * naming the rule.
 */
import { AXES, type PluginView } from "../../src/plugin/contract.ts"

export const view: PluginView = {
  version: 1,
  data: { periods: { from: "/answer/periods", rows: "items" }, summary: { from: "/answer", rows: "object" }, suppressed: { from: "/answer/suppressed", rows: "values" } },
  spec: {
    title: {
      text: {
        expr: "slice(['Axis means by period: a cohort of ' + format(summary.cohort_size, ',') + ' patients', " +
          "'Shaded: a period with a mean withheld (fewer patients than the minimum cell size, the catalog\\'s disclosure.min_cell_size)'], 0, length(suppressed) > 0 ? 2 : 1)"
      }
    },
    width: 480,
    height: 260,
    data: { name: "periods" },
    transform: [
      { window: [{ op: "row_number", as: "order" }] },
      { calculate: "datum.quarter || datum.month || datum.year", as: "period" },
      { fold: AXES.map((a) => `avg_${a}`), as: ["field", "mean"] },
      // An axis the question did not ask for is absent; a withheld mean (small cell) is null.
      { filter: "isDefined(datum.mean)" },
      { calculate: "replace(datum.field, 'avg_', '')", as: "axis" },
      // Each withheld mean starts a new stretch of its axis's line: the line breaks there rather
      // than joining across (said without Vega-Lite 6's `invalid` modes, so Vega-Lite 5 draws it too).
      { calculate: "datum.mean === null ? 1 : 0", as: "gap" },
      { window: [{ op: "sum", field: "gap", as: "stretch" }], groupby: ["axis"], sort: [{ field: "order" }] }
    ],
    encoding: {
      x: { field: "period", type: "ordinal", sort: { field: "order" }, title: "Period" },
      color: { field: "axis", type: "nominal", title: "Axis" }
    },
    layer: [
      {
        transform: [{ filter: "datum.mean !== null" }],
        mark: { type: "line", point: true },
        encoding: {
          y: { field: "mean", type: "quantitative", title: "Mean score (0–10)", scale: { domain: [0, 10] } },
          detail: { field: "stretch", type: "nominal" }
        }
      },
      {
        // One band per period with a withheld mean, beneath the lines.
        transform: [{ filter: "datum.mean === null" }, { aggregate: [{ op: "count", as: "withheld" }, { op: "min", field: "order", as: "order" }], groupby: ["period"] }],
        mark: { type: "bar", color: "#888", opacity: 0.25 },
        encoding: {
          y: { datum: 0, type: "quantitative" },
          y2: { datum: 10 },
          color: { value: "#888" },
          tooltip: [{ field: "period", type: "ordinal", title: "period" }, { field: "withheld", type: "quantitative", title: "axis means withheld" }]
        }
      }
    ]
  }
}
