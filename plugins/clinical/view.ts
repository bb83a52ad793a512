/** How a clinical answer is drawn (src/plugin/view.ts): the reasoning chain, step by step, above the axis correlations it cites. */
import type { PluginView } from "../../src/plugin/contract.ts"

export const view: PluginView = {
  version: 1,
  data: {
    steps: { from: "/answer/reasoning_chain", rows: "values" },
    correlations: { from: "/answer/contributing_data/axis_correlations", rows: "entries" },
    summary: { from: "/answer", rows: "object" },
    evidence: { from: "/answer/contributing_data", rows: "object" }
  },
  spec: {
    title: {
      // Title and subtitle as two lines of one title (Vega-Lite's schema takes an expression for the text only).
      text: { expr: "['Clinical reasoning (confidence ' + format(summary.confidence, '.2f') + ')', 'Encounters in the evidence window: ' + (isValid(evidence.encounters) ? format(evidence.encounters, ',') : 'withheld')]" }
    },
    vconcat: [
      {
        data: { name: "steps" },
        width: 560,
        height: { step: 18 },
        transform: [{ calculate: "(datum.index + 1) + '. ' + datum.value", as: "step" }],
        mark: { type: "text", align: "left", limit: 560 },
        encoding: {
          y: { field: "index", type: "ordinal", axis: null },
          x: { datum: 0, type: "quantitative", axis: null, scale: { domain: [0, 1] } },
          text: { field: "step", type: "nominal" }
        }
      },
      {
        data: { name: "correlations" },
        width: 420,
        transform: [{ filter: "isValid(datum.value)" }],
        mark: "bar",
        encoding: {
          y: { field: "key", type: "nominal", sort: null, title: "Axis pair" },
          x: { field: "value", type: "quantitative", title: "Correlation across the similar patients (r)", scale: { domain: [-1, 1] } },
          tooltip: [{ field: "key", type: "nominal", title: "pair" }, { field: "value", type: "quantitative", format: ".3f" }]
        }
      }
    ]
  }
}
