/**
 * How a device-outcomes answer is drawn (src/plugin/view.ts): a forest plot per metric — each
 * study's estimate (a square sized by its implants) with its 95 % interval, then the pooled
 * estimate as a diamond with its interval, labelled with τ² and I² — from the view
 * representation's `view_data.forest` (forest.ts); the studies and implants in the title.
 */
import type { PluginView } from "../../src/plugin/contract.ts"

export const view: PluginView = {
  version: 1,
  data: { forest: { from: "/answer/view_data/forest", rows: "items" }, summary: { from: "/answer", rows: "object" } },
  spec: {
    title: {
      text: { expr: "replace(summary.device_category, '_', ' ') + ': outcomes by study, pooled'" },
      subtitle: { expr: "summary.studies_analyzed + ' studies, ' + format(summary.sample_size, ',') + ' implants (random effects across studies)'" }
    },
    data: { name: "forest" },
    transform: [
      // The rows' order (each metric's studies, then its pooled row) is kept on the y axis.
      { window: [{ op: "row_number", as: "position" }] },
      {
        calculate: "datum.kind === 'pooled' ? 'Pooled (k = ' + datum.k + '): τ² ' + (isValid(datum.tau2) ? format(datum.tau2, '.3f') : 'withheld') + ', I² ' + " +
          "(isValid(datum.i2) ? format(datum.i2, '.0%') : 'withheld') : datum.label + ' (n = ' + (isValid(datum.n) ? format(datum.n, ',') : 'withheld') + ')'",
        as: "row"
      },
      // Each layer draws its rows through its own field (null elsewhere: not drawn), so every layer
      // reads the same rows and each facet's scales are its metric's alone.
      { calculate: "datum.kind === 'study' ? datum.estimate : null", as: "study_estimate" },
      { calculate: "datum.kind === 'pooled' ? datum.estimate : null", as: "pooled_estimate" },
      { calculate: "isValid(datum.estimate) ? '' : 'withheld (small cell)'", as: "note" }
    ],
    facet: { row: { field: "metric", type: "nominal", sort: null, title: null, header: { labelAngle: 0, labelAlign: "left", labelFontWeight: "bold" } } },
    resolve: { scale: { x: "independent", y: "independent" } },
    spec: {
      width: 420,
      encoding: { y: { field: "row", type: "nominal", sort: { field: "position", op: "min" }, title: null } },
      layer: [
        {
          mark: "rule",
          encoding: {
            x: { field: "ci_low", type: "quantitative", title: "Estimate with its 95 % interval (a rate: share of implants; a score: its scale)" },
            x2: { field: "ci_high" }
          }
        },
        {
          mark: { type: "square", filled: true },
          encoding: {
            x: { field: "study_estimate", type: "quantitative" },
            size: { field: "n", type: "quantitative", title: "Implants" },
            tooltip: [{ field: "label", type: "nominal", title: "study" }, { field: "estimate", type: "quantitative", format: ".4f" }, { field: "n", type: "quantitative" }]
          }
        },
        {
          mark: { type: "point", shape: "diamond", filled: true, size: 260, color: "firebrick" },
          encoding: {
            x: { field: "pooled_estimate", type: "quantitative" },
            tooltip: [{ field: "estimate", type: "quantitative", format: ".4f", title: "pooled" }, { field: "tau2", type: "quantitative", format: ".4f", title: "τ²" }, { field: "i2", type: "quantitative", format: ".1%", title: "I²" }]
          }
        },
        {
          // A withheld estimate (too few implants or events behind it) is said, never drawn as a value.
          mark: { type: "text", align: "left" },
          encoding: { x: { value: 4 }, text: { field: "note", type: "nominal" } }
        }
      ]
    }
  }
}
