/** How a risk-model answer is drawn (src/plugin/view.ts): the probability in the title, the contributing factors as signed bars. */
import type { PluginView } from "../../src/plugin/contract.ts"

export const view: PluginView = {
  version: 1,
  data: { factors: { from: "/answer/contributing_factors", rows: "items" }, summary: { from: "/answer", rows: "object" } },
  spec: {
    title: {
      // Title and subtitle as two lines of one title (Vega-Lite's schema takes an expression for the text only).
      text: { expr: "['Risk of ' + replace(summary.risk_type, '_', ' ') + ': ' + (isValid(summary.probability) ? format(summary.probability, '.1%') : 'withheld'), summary.recommended_interventions + ' recommended interventions; bars: each factor\\'s contribution to the model\\'s log scale']" }
    },
    width: 420,
    data: { name: "factors" },
    transform: [{ filter: "isValid(datum.weight)" }],
    mark: "bar",
    encoding: {
      y: { field: "factor", type: "nominal", sort: null, title: "Factor" },
      x: { field: "weight", type: "quantitative", title: "Contribution (log rate or log odds)" },
      color: { condition: { test: "datum.weight > 0", value: "#b03a2e" }, value: "#2e86c1" },
      tooltip: [{ field: "factor", type: "nominal" }, { field: "weight", type: "quantitative", format: ".3f" }]
    }
  }
}
