/**
 * The usage page's chart as a view (src/plugin/view.ts), drawn by the explorer's machinery: calls
 * a day over the last 30 days, stacked by endpoint, from the answer of GET /portal/api/usage.
 */
import { type PluginView, VIEW_VERSION } from "../../plugin/view.ts"

export const USAGE_VIEW: PluginView = {
  version: VIEW_VERSION,
  data: { days: { from: "/answer/days", rows: "items" } },
  spec: {
    width: "container",
    height: 220,
    data: { name: "days" },
    mark: { type: "bar", tooltip: true },
    encoding: {
      x: { field: "day", type: "ordinal", title: "Day (UTC)", axis: { labelAngle: -45 } },
      y: { aggregate: "sum", field: "calls", type: "quantitative", title: "Calls" },
      color: { field: "endpoint", type: "nominal", title: "Endpoint" },
      tooltip: [
        { field: "day", type: "ordinal", title: "Day" },
        { field: "endpoint", type: "nominal", title: "Endpoint" },
        { field: "calls", type: "quantitative", title: "Calls" },
        { field: "hcc_cost", type: "quantitative", title: "Credits" },
        { field: "refused", type: "quantitative", title: "Refused (429)" }
      ]
    }
  }
}
