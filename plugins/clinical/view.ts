/**
 * How a clinical answer is drawn (src/plugin/view.ts): the reasoning chain's steps by name (a
 * structured step, "name: what it found") or as written, cut to the chart's width; each step whole
 * in its tooltip and, in the explorer, as a numbered list beside the chart (a chart cuts long
 * text, a list does not); below, the axis correlations it cites.
 */
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
    description:
      "The clinical reasoning chain for the question (confidence {/answer/confidence|.2}), step by step, and the correlations between the axes across the similar patients.",
    title: {
      // Title and subtitle as two lines of one title (Vega-Lite's schema takes an expression for the text only).
      text: { expr: "['Clinical reasoning (confidence ' + format(summary.confidence, '.2f') + ')', 'Encounters in the evidence window: ' + (isValid(evidence.encounters) ? format(evidence.encounters, ',') : 'withheld')]" }
    },
    vconcat: [
      {
        data: { name: "steps" },
        width: 420,
        height: { step: 18 },
        // A step is "name: what it found"; the chart names it, its tooltip holds it whole.
        transform: [{ calculate: "(datum.index + 1) + '. ' + replace(split(datum.value, ':')[0], '_', ' ')", as: "step" }],
        // A step longer than the chart is cut with "…": its tooltip and the list beside the chart hold it whole.
        mark: { type: "text", align: "left", limit: 420 },
        encoding: {
          y: { field: "index", type: "ordinal", axis: null },
          x: { datum: 0, type: "quantitative", axis: null, scale: { domain: [0, 1] } },
          text: { field: "step", type: "nominal" },
          tooltip: { field: "value", type: "nominal", title: "step" }
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
