/** How a device-outcomes answer is drawn (src/plugin/view.ts): each metric's pooled estimate (a withheld one labelled), with the studies and implants in the title. */
import type { PluginView } from "../../src/plugin/contract.ts"

export const view: PluginView = {
  version: 1,
  data: { outcomes: { from: "/answer/outcomes", rows: "entries" }, summary: { from: "/answer", rows: "object" } },
  spec: {
    title: {
      text: { expr: "replace(summary.device_category, '_', ' ') + ': pooled outcomes'" },
      subtitle: { expr: "summary.studies_analyzed + ' studies, ' + format(summary.sample_size, ',') + ' implants (random effects across studies)'" }
    },
    width: 420,
    data: { name: "outcomes" },
    encoding: { y: { field: "key", type: "nominal", sort: null, title: "Metric" } },
    layer: [
      {
        transform: [{ filter: "isValid(datum.value)" }],
        mark: "bar",
        encoding: {
          x: { field: "value", type: "quantitative", title: "Pooled estimate (a rate: share of implants; a score: its scale)" },
          tooltip: [{ field: "key", type: "nominal", title: "metric" }, { field: "value", type: "quantitative", format: ".4f" }]
        }
      },
      {
        // A withheld estimate (too few implants behind it) is said, never drawn as a value.
        transform: [{ filter: "datum.value === null" }],
        mark: { type: "text", align: "left", dx: 4, text: "withheld (small cell)" },
        encoding: { x: { datum: 0, type: "quantitative" } }
      }
    ]
  }
}
