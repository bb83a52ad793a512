/**
 * How a device-outcomes answer is drawn (src/plugin/view.ts): a forest plot per metric as
 * meta-analyses draw one (Cochrane's RevMan, metafor's `forest`, OHDSI's `plotForest`) — a row
 * per study with its estimate and 95 % interval, a square whose area is the study's share of the
 * random-effects weights; the pooled estimate a diamond spanning its 95 % interval, the prediction
 * interval (k ≥ 3) a dashed line through it; right of the plot the columns "estimate [95 % CI]"
 * and "weight"; each metric headed by its name, its unit and its heterogeneity (τ², I², Cochran's
 * Q and its p-value, the prediction interval). Rates in per cent of implants, scores on their scale. A
 * withheld study (a small cell) keeps its row, saying so; the pooled row says how many studies it
 * pools. From the view representation's `view_data.forest` (forest.ts).
 */
import type { PluginView } from "../../src/plugin/contract.ts"

/** Where the right-hand columns start, in pixels from the plot's left edge (the plot is 300 wide). */
const PLOT_WIDTH = 300
const ESTIMATE_COLUMN = PLOT_WIDTH + 16
const WEIGHT_COLUMN = PLOT_WIDTH + 150

/** Only the rows this layer draws (each layer reads every row of its facet cell). */
const only = (test: string) => ({ filter: test })

export const view: PluginView = {
  version: 1,
  data: { forest: { from: "/answer/view_data/forest", rows: "items" }, summary: { from: "/answer", rows: "object" } },
  spec: {
    description:
      "Forest plots of {/answer/device_category} outcomes: {/answer/studies_analyzed} studies, {/answer/sample_size|,} implants; each study's estimate with its 95 % interval and weight, and the random-effects pooled estimate of each metric: {/answer/outcomes}.",
    title: {
      // Title and subtitle as two lines of one title (Vega-Lite's schema takes an expression for the text only).
      text: { expr: "['Device outcomes: ' + replace(summary.device_category, /_/g, ' ') + ', by study and pooled', summary.studies_analyzed + ' studies, ' + format(summary.sample_size, ',') + ' implants; random effects across studies']" }
    },
    data: { name: "forest" },
    transform: [
      // The rows' order (each metric's studies, then its pooled row) is kept on the y axis.
      { window: [{ op: "row_number", as: "position" }] },
      { window: [{ op: "row_number", as: "rank_in_metric" }], groupby: ["metric"] },
      { calculate: "test(/_rate$/, datum.metric) ? 100 : 1", as: "unit" },
      {
        calculate: "upper(substring(datum.metric, 0, 1)) + replace(substring(datum.metric, 1), /_/g, ' ') + (datum.unit === 100 ? ' (% of implants)' : ' (score)')",
        as: "metric_title"
      },
      { calculate: "isValid(datum.estimate) ? datum.estimate * datum.unit : null", as: "x" },
      { calculate: "isValid(datum.ci_low) ? datum.ci_low * datum.unit : null", as: "lo" },
      { calculate: "isValid(datum.ci_high) ? datum.ci_high * datum.unit : null", as: "hi" },
      { calculate: "isValid(datum.pi_low) ? datum.pi_low * datum.unit : null", as: "pi_lo" },
      { calculate: "isValid(datum.pi_high) ? datum.pi_high * datum.unit : null", as: "pi_hi" },
      {
        calculate: "datum.kind === 'pooled' ? 'Pooled (' + datum.k + (datum.k === 1 ? ' study)' : ' studies)') : " +
          "'Study ' + datum.label + (isValid(datum.n) ? ' (n = ' + format(datum.n, ',') + ')' : '')",
        as: "row"
      },
      {
        calculate: "isValid(datum.x) ? format(datum.x, datum.unit === 100 ? '.1f' : '.2f') + ' [' + format(datum.lo, datum.unit === 100 ? '.1f' : '.2f') + ', ' + " +
          "format(datum.hi, datum.unit === 100 ? '.1f' : '.2f') + ']' : 'withheld (small cell)'",
        as: "estimate_text"
      },
      { calculate: "isValid(datum.weight) && isValid(datum.x) ? format(datum.weight * 100, '.1f') + ' %' : ''", as: "weight_text" },
      // The metric's heterogeneity on every row of it (only its pooled row has it): the panel's heading.
      {
        joinaggregate: [
          { op: "max", field: "tau2", as: "m_tau2" },
          { op: "max", field: "i2", as: "m_i2" },
          { op: "max", field: "q", as: "m_q" },
          { op: "max", field: "q_p", as: "m_q_p" },
          { op: "max", field: "pi_lo", as: "m_pi_lo" },
          { op: "max", field: "pi_hi", as: "m_pi_hi" }
        ],
        groupby: ["metric"]
      },
      {
        calculate: "datum.metric_title + ' — heterogeneity: ' + (isValid(datum.m_tau2) ? 'τ² = ' + format(datum.m_tau2, '.3f') + ', I² = ' + format(datum.m_i2 * 100, '.0f') + ' %' : 'withheld') + " +
          "(isValid(datum.m_q) && isValid(datum.m_q_p) ? ', Q = ' + format(datum.m_q, '.2f') + (datum.m_q_p < 0.001 ? ' (p < 0.001)' : ' (p = ' + format(datum.m_q_p, '.3f') + ')') : '') + " +
          "(isValid(datum.m_pi_lo) ? '; 95 % prediction interval ' + format(datum.m_pi_lo, datum.unit === 100 ? '.1f' : '.2f') + ' to ' + format(datum.m_pi_hi, datum.unit === 100 ? '.1f' : '.2f') : '')",
        as: "panel"
      }
    ],
    facet: { row: { field: "panel", type: "nominal", sort: { field: "position", op: "min" }, title: null, header: { labelAngle: 0, labelAlign: "left", labelAnchor: "start", labelOrient: "top", labelFontWeight: "bold", labelFontSize: 12, labelLimit: 0 } } },
    resolve: { scale: { x: "independent", y: "independent" } },
    spec: {
      width: PLOT_WIDTH,
      encoding: { y: { field: "row", type: "nominal", sort: { field: "position", op: "min" }, title: null, axis: { labelLimit: 220 } } },
      layer: [
        {
          // The prediction interval: a dashed line through the diamond.
          transform: [only("datum.kind === 'pooled' && isValid(datum.pi_lo)")],
          mark: { type: "rule", strokeDash: [4, 3], color: "firebrick" },
          encoding: { x: { field: "pi_lo", type: "quantitative", title: null }, x2: { field: "pi_hi" } }
        },
        {
          transform: [only("datum.kind === 'study' && isValid(datum.x)")],
          mark: { type: "rule", color: "#333" },
          encoding: {
            x: { field: "lo", type: "quantitative", title: null, scale: { zero: false } },
            x2: { field: "hi" },
            tooltip: [{ field: "row", title: "study" }, { field: "estimate_text", title: "estimate [95 % CI]" }, { field: "weight_text", title: "weight" }]
          }
        },
        {
          // Area ∝ weight: a size scale through 0 (a square's size is its area).
          transform: [only("datum.kind === 'study' && isValid(datum.x)")],
          mark: { type: "square", filled: true, color: "#333", opacity: 1 },
          encoding: {
            x: { field: "x", type: "quantitative" },
            size: { field: "weight", type: "quantitative", scale: { type: "linear", zero: true, domain: [0, 1], range: [0, 900] }, legend: null },
            tooltip: [{ field: "row", title: "study" }, { field: "estimate_text", title: "estimate [95 % CI]" }, { field: "weight_text", title: "weight" }]
          }
        },
        {
          // The diamond: a trail through the interval's ends (width 0) and the estimate (its full height).
          transform: [
            only("datum.kind === 'pooled' && isValid(datum.x) && isValid(datum.lo) && isValid(datum.hi)"),
            { fold: ["lo", "x", "hi"], as: ["end", "at"] },
            { calculate: "datum.end === 'x' ? 14 : 0", as: "diamond_height" },
            { calculate: "datum.end === 'lo' ? 0 : datum.end === 'x' ? 1 : 2", as: "order" }
          ],
          mark: { type: "trail", color: "firebrick" },
          encoding: {
            x: { field: "at", type: "quantitative" },
            size: { field: "diamond_height", type: "quantitative", scale: null, legend: null },
            order: { field: "order" },
            detail: { field: "metric" },
            tooltip: [{ field: "row", title: "pooled" }, { field: "estimate_text", title: "estimate [95 % CI]" }, { field: "panel", title: "metric" }]
          }
        },
        {
          transform: [only("datum.rank_in_metric === 1")],
          mark: { type: "text", align: "left", baseline: "bottom", dy: -8, fontWeight: "bold" },
          encoding: { x: { value: ESTIMATE_COLUMN }, text: { value: "Estimate [95 % CI]" } }
        },
        {
          transform: [only("datum.rank_in_metric === 1")],
          mark: { type: "text", align: "right", baseline: "bottom", dy: -8, fontWeight: "bold" },
          encoding: { x: { value: WEIGHT_COLUMN + 50 }, text: { value: "Weight" } }
        },
        {
          mark: { type: "text", align: "left" },
          encoding: { x: { value: ESTIMATE_COLUMN }, text: { field: "estimate_text" } }
        },
        {
          mark: { type: "text", align: "right" },
          encoding: { x: { value: WEIGHT_COLUMN + 50 }, text: { field: "weight_text" } }
        },
      ]
    }
  }
}
