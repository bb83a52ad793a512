/** How a drug-outcomes answer is drawn (src/plugin/view.ts): per axis, adherence's correlation with the axis change, coloured by the trend on the drug. */
import type { PluginView } from "../../src/plugin/contract.ts"

export const view: PluginView = {
  version: 1,
  data: { axes: { from: "/answer/axis_breakdown", rows: "entries" }, summary: { from: "/answer", rows: "object" } },
  spec: {
    title: {
      text: { expr: "summary.drug + ': ' + summary.outcome_type + ' in a cohort of ' + format(summary.cohort_size, ',')" },
      subtitle: {
        expr: "'Efficacy (Cohen\\'s d): ' + (isValid(summary.efficacy_score) ? format(summary.efficacy_score, '.2f') : 'withheld') + '; adverse events per patient: ' + (isValid(summary.adverse_event_rate) ? format(summary.adverse_event_rate, '.4f') : 'withheld')"
      }
    },
    width: 420,
    data: { name: "axes" },
    transform: [{ filter: "isValid(datum.correlation)" }],
    mark: "bar",
    encoding: {
      y: { field: "key", type: "nominal", sort: null, title: "Axis" },
      x: { field: "correlation", type: "quantitative", title: "Correlation of adherence with the axis change (r)", scale: { domain: [-1, 1] } },
      color: { field: "trend", type: "nominal", title: "Trend on the drug" },
      tooltip: [{ field: "key", type: "nominal", title: "axis" }, { field: "correlation", type: "quantitative", format: ".3f" }, { field: "trend", type: "nominal" }]
    }
  }
}
