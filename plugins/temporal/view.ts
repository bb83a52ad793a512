/**
 * How a temporal answer is drawn (src/plugin/view.ts): per axis, the points given in the request
 * and the selected model's predictions after them, in their 95 % prediction band (the view
 * representation's `view_data`); the model, the urgency and the decay rules that fired in the title.
 */
import type { PluginView } from "../../src/plugin/contract.ts"

/** How to read the lines and the band (the title's second line). */
const KEY = "Solid: the points given; dashed: predicted; shaded: the 95 % prediction band"

/** Rules per title line, and the lines the 28 rules can fill. */
const PER_LINE = 4
const LINES = 7
/**
 * The title's lines: the model and urgency; how to read the chart; how many rules fired, then their names four to a line
 * (one line would run past the chart), as many lines as there are rules for.
 */
const TITLE_LINES = `slice(['Trajectory: ' + replace(summary.decay_model, '_', ' ') + ', urgency ' + summary.intervention_urgency, ${JSON.stringify(KEY).replaceAll('"', "'")}, length(rules) + ' decay rules fired:', ${
  Array.from({ length: LINES }, (_, i) => `join(slice(pluck(rules, 'value'), ${i * PER_LINE}, ${(i + 1) * PER_LINE}), ', ')`).join(", ")
}], 0, 3 + ceil(length(rules) / ${PER_LINE}))`

/** A point's tooltip: its axis, step, score and whether it was given or predicted. */
const TOOLTIP = [
  { field: "key", type: "nominal", title: "axis" },
  { field: "step", type: "quantitative" },
  { field: "value", type: "quantitative", format: ".2f", title: "score" },
  { field: "part", type: "nominal" }
]

export const view: PluginView = {
  version: 1,
  data: {
    given: { from: "/request/patient_axes", rows: "series" },
    predicted: { from: "/answer/predicted_trajectory", rows: "series" },
    band: { from: "/answer/view_data/band", rows: "items" },
    rules: { from: "/answer/decay_rules_triggered", rows: "values" },
    summary: { from: "/answer", rows: "object" }
  },
  spec: {
    description:
      "Line chart of the axis scores given and the {/answer/decay_model} model's predictions after them, with their 95 % prediction band; urgency {/answer/intervention_urgency}; decay rules fired: {/answer/decay_rules_triggered}.",
    // The title, then the rules' lines (one title of several lines: Vega-Lite's schema takes an expression for its text only).
    title: { text: { expr: TITLE_LINES } },
    width: 480,
    height: 260,
    encoding: {
      x: { field: "step", type: "quantitative", title: "Steps ({/request/interval?monthly}) from the first point given" },
      y: { field: "value", type: "quantitative", title: "Axis score (0–10)", scale: { domain: [0, 10] } },
      color: { field: "key", type: "nominal", title: "Axis" }
    },
    layer: [
      {
        // The predictions' 95 % band (view data): drawn first, beneath the lines.
        data: { name: "band" },
        transform: [
          { lookup: "axis", from: { data: { name: "given" }, key: "key", fields: ["length"] }, as: ["given_length"] },
          { calculate: "datum.given_length + datum.index", as: "step" },
          { calculate: "datum.axis", as: "key" }
        ],
        mark: { type: "area", opacity: 0.3 },
        encoding: {
          y: { field: "lo", type: "quantitative" },
          y2: { field: "hi" },
          tooltip: [{ field: "key", type: "nominal", title: "axis" }, { field: "step", type: "quantitative" }, { field: "lo", type: "quantitative", format: ".2f", title: "95 % band from" }, { field: "hi", type: "quantitative", format: ".2f", title: "to" }]
        }
      },
      {
        data: { name: "given" },
        transform: [{ calculate: "datum.index", as: "step" }, { calculate: "'given'", as: "part" }],
        mark: { type: "line", point: true },
        encoding: { tooltip: TOOLTIP }
      },
      {
        data: { name: "predicted" },
        transform: [
          { lookup: "key", from: { data: { name: "given" }, key: "key", fields: ["length"] }, as: ["given_length"] },
          { calculate: "datum.given_length + datum.index", as: "step" },
          { calculate: "'predicted'", as: "part" }
        ],
        mark: { type: "line", point: { shape: "diamond" }, strokeDash: [4, 3] },
        encoding: { tooltip: TOOLTIP }
      }
    ]
  }
}
