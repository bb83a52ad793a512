/**
 * How a population answer is drawn (src/plugin/view.ts): one line per axis over the periods, named
 * in full, on a scale fitted to the means (not the whole 0–10 range, where eight lines merge into
 * one band); the trend's p-value in the title. A withheld mean (a small cell) is a gap in its line,
 * and its period one shaded band (however many of its axes are withheld: one mark per period,
 * never text piled up); the host's subtitle line names the rule and its threshold. With the view
 * representation each mean carries its patients and 95 % interval (`view_data.intervals`): a band
 * per axis around its line, and both in the points' tooltips.
 */
import { AXES, AXIS_NAMES, type PluginView } from "../../src/plugin/contract.ts"

/** A Vega expression naming an axis code in full (`AXIS_NAMES`). */
const AXIS_NAME = `{${AXES.map((a) => `${a}: '${AXIS_NAMES[a].replaceAll("'", "\\'")}'`).join(", ")}}[datum.axis]`

export const view: PluginView = {
  version: 1,
  data: {
    periods: { from: "/answer/periods", rows: "items" },
    summary: { from: "/answer", rows: "object" },
    suppressed: { from: "/answer/suppressed", rows: "values" },
    intervals: { from: "/answer/view_data/periods", rows: "items" }
  },
  spec: {
    description:
      "Line chart of the mean score of each asked axis by period, with its 95 % interval where the answer carries it, for a cohort of {/answer/cohort_size|,} patients; the trend's p-value (Bonferroni over the axes) is {/answer/statistical_significance|.4} (0.0000: below 0.00005).",
    title: {
      text: {
        // Lines joined by "|" and split: the bands' line only where the answer carries intervals, the
        // shading's only where a mean is withheld.
        expr: "split('Axis means by period: a cohort of ' + format(summary.cohort_size, ',') + ' patients' + " +
          "'|Trend: ' + (!isValid(summary.statistical_significance) ? 'p withheld' : summary.statistical_significance < 0.001 ? 'p < 0.001' : 'p = ' + format(summary.statistical_significance, '.3f')) + ' (mean per-patient slope, t-test, Bonferroni over the axes)' + " +
          "(length(intervals) > 0 ? '|Bands: the 95 % interval of each mean (patients as clusters)' : '') + " +
          "(length(suppressed) > 0 ? '|Shaded: a period with an axis mean withheld' : ''), '|')"
      }
    },
    width: 480,
    height: 260,
    data: { name: "periods" },
    transform: [
      { window: [{ op: "row_number", as: "order" }] },
      { calculate: "datum.quarter || datum.month || datum.year", as: "period" },
      // Each period's patients and intervals, where the answer carries them (its view representation).
      { lookup: "period", from: { data: { name: "intervals" }, key: "period", fields: AXES.flatMap((a) => [`n_${a}`, `low_${a}`, `high_${a}`]) } },
      { fold: AXES.map((a) => `avg_${a}`), as: ["field", "mean"] },
      // An axis the question did not ask for is absent; a withheld mean (small cell) is null.
      { filter: "isDefined(datum.mean)" },
      { calculate: "replace(datum.field, 'avg_', '')", as: "axis" },
      { calculate: AXIS_NAME, as: "axis_name" },
      { calculate: "datum[replace(datum.field, 'avg_', 'n_')]", as: "n" },
      { calculate: "datum[replace(datum.field, 'avg_', 'low_')]", as: "low" },
      { calculate: "datum[replace(datum.field, 'avg_', 'high_')]", as: "high" },
      // Each withheld mean starts a new stretch of its axis's line: the line breaks there rather
      // than joining across (said without Vega-Lite 6's `invalid` modes, so Vega-Lite 5 draws it too).
      { calculate: "datum.mean === null ? 1 : 0", as: "gap" },
      { window: [{ op: "sum", field: "gap", as: "stretch" }], groupby: ["axis"], sort: [{ field: "order" }] }
    ],
    encoding: {
      x: { field: "period", type: "ordinal", sort: { field: "order" }, title: "Period" },
      // The legend's symbols as the points are, not as the bands' faint fill.
      color: { field: "axis_name", type: "nominal", title: "Axis", sort: AXES.map((a) => AXIS_NAMES[a]), legend: { symbolType: "circle", symbolOpacity: 1 } }
    },
    layer: [
      {
        // Each axis's 95 % band, beneath its line, broken where the line is.
        transform: [{ filter: "datum.mean !== null && isValid(datum.low) && isValid(datum.high)" }],
        mark: { type: "area", opacity: 0.15 },
        encoding: {
          y: { field: "low", type: "quantitative" },
          y2: { field: "high" },
          detail: { field: "stretch", type: "nominal" }
        }
      },
      {
        transform: [{ filter: "datum.mean !== null" }],
        mark: { type: "line", point: true },
        encoding: {
          y: { field: "mean", type: "quantitative", title: "Mean score (scale 0–10)", scale: { zero: false, nice: true } },
          detail: { field: "stretch", type: "nominal" },
          tooltip: [
            { field: "period", type: "ordinal", title: "period" },
            { field: "axis_name", type: "nominal", title: "axis" },
            { field: "mean", type: "quantitative", title: "mean score", format: ".3f" },
            { field: "low", type: "quantitative", title: "95 % interval from", format: ".3f" },
            { field: "high", type: "quantitative", title: "95 % interval to", format: ".3f" },
            { field: "n", type: "quantitative", title: "patients scored", format: "," }
          ]
        }
      },
      {
        // One band per period with a withheld mean, the plot's full height, beneath the lines.
        transform: [{ filter: "datum.mean === null" }, { aggregate: [{ op: "count", as: "withheld" }, { op: "min", field: "order", as: "order" }], groupby: ["period"] }],
        mark: { type: "bar", color: "#888", opacity: 0.25 },
        encoding: {
          y: { value: 0 },
          y2: { value: "height" },
          color: { value: "#888" },
          tooltip: [{ field: "period", type: "ordinal", title: "period" }, { field: "withheld", type: "quantitative", title: "axis means withheld" }]
        }
      }
    ]
  }
}
