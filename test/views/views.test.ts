/**
 * Every built-in view (plugins/<domain>/view.ts) drawn in Node from its domain's documented
 * example — the request and the answer the service gives it — with `vega`: the SVG is made, and
 * the marks carry the answer's numbers (one point per published period and axis, a gap and a
 * label at a withheld one; one bar per factor, axis, metric or correlation at its value; the
 * given points and the predictions after them). What is drawn from the view representation's data
 * (device outcomes' forest plot, one-health's series and lags) is checked in view-data.test.ts and,
 * from real answers, in test/http/view-representation.test.ts.
 */
import { describe, expect, it } from "vitest"
import { AXES, AXIS_NAMES } from "../../src/plugin/axes.ts"
import type { PluginView } from "../../src/plugin/view.ts"
import { checkView } from "../../src/plugin/viewCheck.ts"
import { compileProblem } from "../../src/plugin/viewCompile.ts"
import { withViewData } from "../../src/plugin/viewData.ts"
import { type DrawnItem, drawView } from "../../src/views/render.ts"

const DOMAINS = ["clinical", "drug-outcomes", "risk-model", "device-outcomes", "population", "one-health", "temporal"] as const

interface Example {
  readonly view: PluginView
  readonly contract: { readonly request: any; readonly response: any; readonly viewData?: any; readonly examples: ReadonlyArray<{ readonly name: string; readonly request: any }> }
  readonly request: any
  readonly answer: any
}

const example = async (domain: string): Promise<Example> => {
  const { contract } = await import(`../../plugins/${domain}/contract.ts`)
  const answers = (await import(`../../plugins/${domain}/example-answers.json`, { with: { type: "json" } })).default
  const first = contract.examples[0]
  return { view: contract.view, contract, request: first.request, answer: answers[first.name] }
}

const marks = (items: ReadonlyArray<DrawnItem>, marktype: string) => items.filter((i) => i.role === "mark" && i.marktype === marktype)
const titles = (items: ReadonlyArray<DrawnItem>) => items.filter((i) => i.role === "title-text" || i.role === "title-subtitle").map((i) => i.text).join(" | ")

describe("built-in views", () => {
  it.each(DOMAINS)("%s: declares a view that fits its schemas and draws to SVG", async (domain) => {
    const e = await example(domain)
    expect(checkView(e.view, e.contract.request, withViewData(e.contract.response, e.contract.viewData))).toBeUndefined()
    // A server does not compile its own views when it loads them (PluginRegistry.ts): this does.
    expect(compileProblem(e.view)).toBeUndefined()
    const { svg, items } = await drawView(e.view, e.request, e.answer)
    expect(svg.startsWith("<svg")).toBe(true)
    expect(items.some((i) => i.role === "title-text" && (i.text ?? "") !== "")).toBe(true)
  })

  it("population: one point per published period and axis at its mean, axes named in full, on a scale fitted to the means; a withheld mean is a gap, its period one shaded band, the rule and its threshold in the title", async () => {
    const e = await example("population")
    const answer = structuredClone(e.answer)
    const withheld = answer.periods[1]
    withheld.avg_NM = null
    const { items } = await drawView(e.view, e.request, answer)
    const points = marks(items, "symbol")
    const expected = answer.periods.flatMap((p: Record<string, unknown>) => AXES.flatMap((a) => (typeof p[`avg_${a}`] === "number" ? [[p.quarter, a, p[`avg_${a}`]]] : [])))
    expect(points.map((s) => [s.datum!.period, s.datum!.axis, s.datum!.mean])).toEqual(expected)
    expect(points.some((s) => s.datum!.period === withheld.quarter && s.datum!.axis === "NM")).toBe(false)
    // The NM line has no point at the withheld period and breaks there: two stretches, one before
    // and one after (never a zero, never a line joined across)…
    const nm = marks(items, "line").filter((l) => l.datum!.axis === "NM")
    expect(nm.some((l) => l.datum!.period === withheld.quarter)).toBe(false)
    expect(nm).toHaveLength(answer.periods.length - 1)
    const stretches = new Map(nm.map((l) => [l.datum!.period, l.datum!.stretch]))
    expect(answer.periods.filter((p: any) => p !== withheld).map((p: any) => stretches.get(p.quarter))).toEqual(answer.periods.slice(1).map((_: unknown, i: number) => (i === 0 ? 0 : 1)))
    // …and one band marks the period, with the rule said in the title (once, as the answer says something is withheld).
    answer.suppressed = ["/periods/1/avg_NM"]
    const again = (await drawView(e.view, e.request, answer, 11)).items
    expect(marks(again, "rect").map((r) => [r.datum!.period, r.datum!.withheld])).toEqual([[withheld.quarter, 1]])
    expect(marks(again, "text")).toEqual([])
    expect(titles(again)).toContain("Shaded: a period with an axis mean withheld")
    expect(titles(again)).toContain("Withheld: 1 value rests on fewer than 11 patients (the small-cell rule)")
    expect(titles(items)).not.toContain("Shaded:")
    expect(titles(items)).not.toContain("Withheld:")
    expect(titles(items)).toContain(`cohort of ${answer.cohort_size.toLocaleString("en")} patients`)
    const p = answer.statistical_significance
    expect(titles(items)).toContain(`Trend: ${p < 0.001 ? "p < 0.001" : `p = ${p.toFixed(3)}`} (mean per-patient slope`)
    // Axes by their published names, in the legend and on every point.
    expect(new Set(points.map((s) => s.datum!.axis_name))).toEqual(new Set(AXES.map((a) => AXIS_NAMES[a])))
    const legend = items.filter((i) => i.role === "legend-label").map((i) => i.text)
    expect(legend).toEqual(AXES.map((a) => AXIS_NAMES[a]))
    // The means (6.0–6.8 here) spread over the plot's height, not squeezed into a tenth of a 0–10 scale.
    const ys = points.map((s) => s.y!)
    expect(Math.max(...ys) - Math.min(...ys)).toBeGreaterThan(130)
    // With the view representation: each mean's band, beneath its point, and its patients; said in a title line.
    expect(marks(items, "area")).toEqual([])
    expect(titles(items)).not.toContain("Bands:")
    const periods = e.answer.periods.map((p: Record<string, any>) => ({
      period: p.quarter,
      ...Object.fromEntries(AXES.flatMap((a) => [[`n_${a}`, 1500], [`low_${a}`, p[`avg_${a}`] - 0.05], [`high_${a}`, p[`avg_${a}`] + 0.05]]))
    }))
    const banded = (await drawView(e.view, e.request, { ...e.answer, view_data: { periods } })).items
    const areas = marks(banded, "area")
    expect(areas).toHaveLength(e.answer.periods.length * AXES.length)
    for (const a of areas) {
      const point = marks(banded, "symbol").find((s) => s.datum!.period === a.datum!.period && s.datum!.axis === a.datum!.axis)!
      // Pixels grow downwards: the band runs from its low end (below the point) up to its high end.
      expect(a.y2! < point.y! && point.y! < a.y!, `${a.y} ${point.y} ${a.y2}`).toBe(true)
      expect(point.datum!.n).toBe(1500)
    }
    expect(titles(banded)).toContain("Bands: the 95 % interval of each mean (patients as clusters)")
  })

  it("risk-model: one signed bar per factor at its weight, its direction in a legend; the probability within the horizon, its interval and the model's scale in the title", async () => {
    const e = await example("risk-model")
    const { items } = await drawView(e.view, e.request, e.answer)
    expect(marks(items, "rect").map((r) => [r.datum!.factor, r.datum!.weight])).toEqual(e.answer.contributing_factors.map((f: any) => [f.factor, f.weight]))
    expect(titles(items)).toContain(`Risk of hospitalization within 90 days: ${(e.answer.probability * 100).toFixed(1)}%`)
    expect(titles(items)).toContain("on the model's log rate scale")
    expect(items.filter((i) => i.role === "legend-label").map((i) => i.text)).toEqual(["raises the risk", "lowers the risk"])
    const withInterval = { ...e.answer, view_data: { probability_low: 0.0101, probability_high: 0.0189, scale: "log rate" } }
    expect(titles((await drawView(e.view, e.request, withInterval)).items)).toContain("(95 % interval 1.0%–1.9%)")
  })

  it("drug-outcomes: one bar per axis at its correlation, coloured by its trend; efficacy and adverse events in the title", async () => {
    const e = await example("drug-outcomes")
    const { items } = await drawView(e.view, e.request, e.answer)
    const expected = Object.entries(e.answer.axis_breakdown as Record<string, { correlation: number | null; trend: string }>).filter(([, v]) => v.correlation !== null)
    expect(marks(items, "rect").map((r) => [r.datum!.key, r.datum!.correlation, r.datum!.trend])).toEqual(expected.map(([k, v]) => [k, v.correlation, v.trend]))
    expect(titles(items)).toContain(e.answer.efficacy_score.toFixed(2))
    expect(titles(items)).toContain(e.answer.adverse_event_rate.toFixed(4))
  })

  it("one-health: the lag, its correlation and the alert in the title (the series and the lags need the view data)", async () => {
    const e = await example("one-health")
    const { items } = await drawView(e.view, e.request, e.answer)
    expect(titles(items)).toContain(`Lag ${e.answer.temporal_lag.replace("_", " ")} (r = ${e.answer.correlation_strength.toFixed(2)}); alert ${e.answer.alert_level}`)
    expect(marks(items, "rect")).toEqual([])
  })

  it("one-health: a week whose human count is withheld is one grey band, said in a title line; an unreported week is a gap", async () => {
    const e = await example("one-health")
    const weeks = Array.from({ length: 12 }, (_, i) => ({ week: new Date(Date.UTC(2025, 0, 6 + 7 * i)).toISOString().slice(0, 10), animal: 10 + i, human: 5 + (i % 3) }))
    weeks[4]!.human = null as unknown as number
    weeks[8]!.human = null as unknown as number
    const viewData = { lag_weeks: 1, weeks, correlation: [{ lag_days: 0, r: 0.2, pairs: 11 }, { lag_days: 7, r: 0.6, pairs: 10 }], threshold: 0.5 }
    // What the small-cell rule withholds in view data is listed in view_data.suppressed (docs/api.md).
    const answer = { ...e.answer, view_data: { ...viewData, suppressed: ["/view_data/weeks/4/human"] } }
    const { items } = await drawView(e.view, e.request, answer, 11)
    // Week 4 withheld (listed), week 8 unreported (not listed): one band, at week 4.
    expect(marks(items, "rect").filter((r) => r.datum!.human_cases !== undefined).map((r) => r.datum!.week)).toEqual([weeks[4]!.week])
    expect(titles(items)).toContain("Grey: a week whose human count is withheld")
    expect(titles(items)).toContain("Withheld: 1 value rests on fewer than 11 patients (the small-cell rule)")
    // Every drawn point has its tooltip's fields; the human line breaks at both missing weeks.
    const human = marks(items, "symbol").filter((p) => p.datum!.series === "human")
    expect(human.map((p) => p.datum!.week)).toEqual(weeks.filter((w) => w.human !== null).map((w) => w.week))
    expect(new Set(human.map((p) => p.datum!.stretch))).toEqual(new Set([0, 1, 2]))
    const plain = await drawView(e.view, e.request, { ...e.answer, view_data: viewData })
    expect(titles(plain.items)).not.toContain("Grey:")
  })

  it("temporal: the points given, then the predictions from where they end; the rules that fired in the title", async () => {
    const e = await example("temporal")
    const { items } = await drawView(e.view, e.request, e.answer)
    const points = marks(items, "symbol").map((s) => [s.datum!.key, s.datum!.step, s.datum!.value])
    const given = Object.entries(e.request.patient_axes as Record<string, ReadonlyArray<number>>)
    const expected = [
      ...given.flatMap(([axis, xs]) => xs.map((x, i) => [axis, i, x])),
      ...Object.entries(e.answer.predicted_trajectory as Record<string, ReadonlyArray<number>>).flatMap(([axis, xs]) =>
        xs.map((x, i) => [axis, given.find(([a]) => a === axis)![1].length + i, x]))
    ]
    expect(points).toEqual(expected)
    for (const rule of e.answer.decay_rules_triggered) expect(titles(items)).toContain(rule)
    // How to read it, beside the chart: given, predicted, the band.
    expect(titles(items)).toContain("Solid: the points given; dashed: predicted; shaded: the 95 % prediction band")
  })

  it("clinical: each reasoning step in order by name, the whole step its tooltip; one bar per axis correlation it cites", async () => {
    const e = await example("clinical")
    const { items } = await drawView(e.view, e.request, e.answer)
    const steps = marks(items, "text")
    expect(steps.map((t) => t.text)).toEqual(e.answer.reasoning_chain.map((s: string, i: number) => `${i + 1}. ${s.split(":")[0]!.replace("_", " ")}`))
    expect(steps.map((t) => t.datum!.value)).toEqual(e.answer.reasoning_chain)
    expect(marks(items, "rect").map((r) => [r.datum!.key, r.datum!.value])).toEqual(Object.entries(e.answer.contributing_data.axis_correlations).filter(([, v]) => v !== null))
  })
})
