/**
 * How a risk-model answer is drawn (src/plugin/view.ts): the probability within the horizon asked,
 * with its 95 % interval (the view representation's `view_data`), in the title; the contributing
 * factors as signed bars on the model's own scale (log rate or log odds, named), coloured by
 * direction with a legend.
 */
import type { PluginView } from "../../src/plugin/contract.ts"

export const view: PluginView = {
  version: 1,
  data: {
    factors: { from: "/answer/contributing_factors", rows: "items" },
    summary: { from: "/answer", rows: "object" },
    meta: { from: "/answer/view_data", rows: "object" },
    asked: { from: "/request", rows: "object" }
  },
  spec: {
    description:
      "Bar chart of the largest contributions to the {/answer/risk_type} risk of a profile: probability {/answer/probability|.1%} " +
      "within {/request/horizon} (95 % interval {/answer/view_data/probability_low|.1%} to {/answer/view_data/probability_high|.1%}); " +
      "{/answer/recommended_interventions} recommended interventions.",
    title: {
      // Title lines as one expression (Vega-Lite's schema takes an expression for the text only).
      text: {
        expr: "['Risk of ' + replace(summary.risk_type, '_', ' ') + ' within ' + replace(asked.horizon, '_', ' ') + ': ' + " +
          "(isValid(summary.probability) ? format(summary.probability, '.1%') + (isValid(meta.probability_low) ? ' (95 % interval ' + format(meta.probability_low, '.1%') + '–' + format(meta.probability_high, '.1%') + ')' : '') : 'withheld'), " +
          "summary.recommended_interventions + ' recommended interventions; bars: each factor\\'s contribution on the model\\'s ' + (isValid(meta.scale) ? meta.scale : (summary.risk_type === 'hospitalization' ? 'log rate' : 'log odds')) + ' scale, against a patient at the population\\'s mean']"
      }
    },
    width: 420,
    data: { name: "factors" },
    transform: [{ filter: "isValid(datum.weight)" }, { calculate: "datum.weight > 0 ? 'raises the risk' : 'lowers the risk'", as: "direction" }],
    mark: "bar",
    encoding: {
      y: { field: "factor", type: "nominal", sort: null, title: "Factor" },
      x: { field: "weight", type: "quantitative", title: "Contribution (model scale: e^weight multiplies the rate or the odds)" },
      color: { field: "direction", type: "nominal", title: "Direction", scale: { domain: ["raises the risk", "lowers the risk"], range: ["#b03a2e", "#2e86c1"] } },
      tooltip: [{ field: "factor", type: "nominal" }, { field: "weight", type: "quantitative", format: ".3f" }, { field: "direction", type: "nominal" }]
    }
  }
}
