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
import { AXES } from "../../src/plugin/axes.ts"
import type { PluginView } from "../../src/plugin/view.ts"
import { checkView } from "../../src/plugin/viewCheck.ts"
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
    const { svg, items } = await drawView(e.view, e.request, e.answer)
    expect(svg.startsWith("<svg")).toBe(true)
    expect(items.some((i) => i.role === "title-text" && (i.text ?? "") !== "")).toBe(true)
  })

  it("population: one point per published period and axis at its mean; a withheld mean is a gap, its period one shaded band, the rule in the title", async () => {
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
    const again = (await drawView(e.view, e.request, answer)).items
    expect(marks(again, "rect").map((r) => [r.datum!.period, r.datum!.withheld])).toEqual([[withheld.quarter, 1]])
    expect(marks(again, "text")).toEqual([])
    expect(titles(again)).toContain("Shaded: a period with a mean withheld (fewer patients than the minimum cell size")
    expect(titles(items)).not.toContain("Shaded:")
    expect(titles(items)).toContain(`cohort of ${answer.cohort_size.toLocaleString("en")} patients`)
  })

  it("risk-model: one signed bar per factor at its weight; the probability in the title", async () => {
    const e = await example("risk-model")
    const { items } = await drawView(e.view, e.request, e.answer)
    expect(marks(items, "rect").map((r) => [r.datum!.factor, r.datum!.weight])).toEqual(e.answer.contributing_factors.map((f: any) => [f.factor, f.weight]))
    expect(titles(items)).toContain(`${(e.answer.probability * 100).toFixed(1)}%`)
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

  it("clinical: each reasoning step in order, one bar per axis correlation it cites", async () => {
    const e = await example("clinical")
    const { items } = await drawView(e.view, e.request, e.answer)
    expect(marks(items, "text").map((t) => t.text)).toEqual(e.answer.reasoning_chain.map((s: string, i: number) => `${i + 1}. ${s}`))
    expect(marks(items, "rect").map((r) => [r.datum!.key, r.datum!.value])).toEqual(Object.entries(e.answer.contributing_data.axis_correlations).filter(([, v]) => v !== null))
  })
})
