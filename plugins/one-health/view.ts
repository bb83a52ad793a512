/** How a one-health answer is drawn (src/plugin/view.ts): the lagged correlation found, on its −1…1 scale, with the lag and the alert. */
import type { PluginView } from "../../src/plugin/contract.ts"

export const view: PluginView = {
  version: 1,
  data: { result: { from: "/answer", rows: "object" } },
  spec: {
    title: {
      text: { expr: "'Animal series leading the human one: ' + (result.correlation_found ? 'found' : 'not found')" },
      subtitle: { expr: "'Lag ' + replace(result.temporal_lag, '_', ' ') + '; alert ' + result.alert_level + ', zoonotic risk ' + result.zoonotic_risk" }
    },
    width: 420,
    height: 60,
    data: { name: "result" },
    mark: "bar",
    encoding: {
      x: { field: "correlation_strength", type: "quantitative", title: "Correlation at the best lag (r)", scale: { domain: [-1, 1] } },
      tooltip: [{ field: "correlation_strength", type: "quantitative", format: ".3f" }, { field: "temporal_lag", type: "nominal" }]
    }
  }
}
