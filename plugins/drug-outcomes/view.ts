/**
 * How a drug-outcomes answer is drawn (src/plugin/view.ts): per target axis, the standardized
 * effect (Cohen's d) with its 95 % interval, from the view representation's `view_data`; below it,
 * adherence's correlation with the axis change, coloured by the trend on the drug; the efficacy
 * score (the effects' mean) and the adverse-event rate in the title.
 */
import type { PluginView } from "../../src/plugin/contract.ts"

/** One row per axis, in the answer's order. */
const AXIS_ROW = { field: "axis", type: "nominal", sort: null, title: "Axis" } as const

export const view: PluginView = {
  version: 1,
  data: {
    effects: { from: "/answer/view_data/effects", rows: "items" },
    axes: { from: "/answer/axis_breakdown", rows: "entries" },
    summary: { from: "/answer", rows: "object" }
  },
  spec: {
    description:
      "Effects of {/answer/drug} on each target axis (Cohen's d with 95 % intervals) in a cohort of {/answer/cohort_size|,}; efficacy {/answer/efficacy_score|.2}, adverse events per patient {/answer/adverse_event_rate|.4}; and adherence's correlation with each axis change.",
    title: {
      // Title and subtitle as two lines of one title (Vega-Lite's schema takes an expression for the text only).
      text: { expr: "[summary.drug + ': ' + summary.outcome_type + ' in a cohort of ' + format(summary.cohort_size, ','), 'Efficacy (Cohen\\'s d, mean over the axes): ' + (isValid(summary.efficacy_score) ? format(summary.efficacy_score, '.2f') : 'withheld') + '; adverse events per patient: ' + (isValid(summary.adverse_event_rate) ? format(summary.adverse_event_rate, '.4f') : 'withheld')]" }
    },
    vconcat: [
      {
        title: { text: "Effect on each axis against comparable unexposed patients", fontSize: 12 },
        data: { name: "effects" },
        width: 420,
        layer: [
          {
            mark: "rule",
            encoding: {
              y: AXIS_ROW,
              x: { field: "ci_low", type: "quantitative", title: "Cohen's d with its 95 % interval (exposed − unexposed)" },
              x2: { field: "ci_high" },
              tooltip: [{ field: "axis", type: "nominal" }, { field: "ci_low", type: "quantitative", format: ".3f", title: "95 % interval from" }, { field: "ci_high", type: "quantitative", format: ".3f", title: "to" }]
            }
          },
          {
            mark: { type: "point", filled: true, size: 70 },
            encoding: {
              y: AXIS_ROW,
              x: { field: "d", type: "quantitative" },
              tooltip: [{ field: "axis", type: "nominal" }, { field: "d", type: "quantitative", format: ".3f" }, { field: "exposed", type: "quantitative" }, { field: "comparators", type: "quantitative" }]
            }
          },
          // No effect: a line at d = 0 across the panel (one row, so one line).
          { data: { name: "summary" }, mark: { type: "rule", color: "gray", strokeDash: [3, 3] }, encoding: { x: { datum: 0, type: "quantitative" } } }
        ]
      },
      {
        title: { text: "Adherence's correlation with the change on the drug", fontSize: 12 },
        data: { name: "axes" },
        width: 420,
        transform: [{ filter: "isValid(datum.correlation)" }],
        mark: "bar",
        encoding: {
          y: { field: "key", type: "nominal", sort: null, title: "Axis" },
          x: { field: "correlation", type: "quantitative", title: "Correlation of adherence with the axis change (r)", scale: { domain: [-1, 1] } },
          color: { field: "trend", type: "nominal", title: "Trend on the drug" },
          tooltip: [{ field: "key", type: "nominal", title: "axis" }, { field: "correlation", type: "quantitative", format: ".3f" }, { field: "trend", type: "nominal" }]
        }
      }
    ]
  }
}

/**
 * The network answer's view (docs/network.md): the same panels and, below, the forest plot of each
 * axis across the sites — each site's d and 95 % interval, a square whose area is its share of the
 * random-effects weights, then the pooled REML estimate as a diamond spanning its Hartung–Knapp interval.
 */
export const networkView: PluginView = {
  ...view,
  data: { ...view.data, sites: { from: "/answer/view_data/sites", rows: "items" } },
  spec: {
    ...view.spec,
    vconcat: [
      ...(view.spec["vconcat"] as ReadonlyArray<unknown>),
      {
        title: { text: "Each axis across the sites (random effects: REML, Hartung–Knapp interval)", fontSize: 12 },
        data: { name: "sites" },
        width: 420,
        transform: [{ calculate: "datum.axis + ' · ' + datum.site", as: "row" }],
        encoding: { y: { field: "row", type: "nominal", sort: null, title: "Axis · site" } },
        layer: [
          {
            mark: "rule",
            encoding: {
              x: { field: "ci_low", type: "quantitative", title: "Cohen's d with its 95 % interval" },
              x2: { field: "ci_high" },
              tooltip: [{ field: "row", type: "nominal", title: "axis · site" }, { field: "ci_low", type: "quantitative", format: ".3f", title: "95 % interval from" }, { field: "ci_high", type: "quantitative", format: ".3f", title: "to" }]
            }
          },
          {
            transform: [{ filter: "datum.site !== 'pooled'" }],
            mark: { type: "square", filled: true },
            encoding: {
              x: { field: "d", type: "quantitative" },
              size: { field: "weight", type: "quantitative", title: "Weight", scale: { domain: [0, 1], range: [0, 400] } },
              tooltip: [{ field: "row", type: "nominal", title: "axis · site" }, { field: "d", type: "quantitative", format: ".3f" }, { field: "weight", type: "quantitative", format: ".1%" }]
            }
          },
          {
            transform: [{ filter: "datum.site === 'pooled'" }],
            mark: { type: "point", shape: "diamond", filled: true, size: 160, color: "black" },
            encoding: {
              x: { field: "d", type: "quantitative" },
              tooltip: [{ field: "row", type: "nominal", title: "axis · pooled" }, { field: "d", type: "quantitative", format: ".3f" }]
            }
          }
        ]
      }
    ]
  }
}
