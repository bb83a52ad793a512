/**
 * Draws a view (src/plugin/view.ts) in the browser: the Vega-Lite specification compiled to Vega
 * and run with Vega's expression interpreter (`vega-interpreter`), not its code generator — the
 * explorer's Content-Security-Policy allows no `eval` — into SVG, which screen readers and tests
 * can read. Beside it, each table the chart draws as an HTML table.
 */
import * as vega from "vega"
import { expressionInterpreter } from "vega-interpreter"
import { compile, type TopLevelSpec } from "vega-lite"
import { type PluginView, tableRows, viewSpec } from "../plugin/view.ts"

/** Draws the chart of an answer into `container`; the running view (finalize it before drawing again). */
export const drawChart = async (container: HTMLElement, view: PluginView, request: unknown, answer: unknown): Promise<vega.View> => {
  // Vega-Lite's warnings (a facet's layers that share their rows, say) are not the reader's concern.
  const compiled = compile(viewSpec(view, request, answer) as unknown as TopLevelSpec, { logger: vega.logger(vega.Error) }).spec
  const runtime = new vega.View(vega.parse(compiled, undefined, { ast: true }), {
    expr: expressionInterpreter,
    renderer: "svg",
    container,
    hover: true
  } as vega.ViewOptions)
  await runtime.runAsync()
  return runtime
}

/**
 * Names a drawn chart for every reader: its title's lines become the figure's caption and the
 * chart's accessible name (role img), and the SVG inside is hidden from assistive technology — read
 * one by one, its tick labels and marks are noise ("stretch: 0"); the tables beside it hold the
 * numbers.
 */
export const nameChart = (container: HTMLElement, caption: HTMLElement): string => {
  const lines = [...container.querySelectorAll(".role-title-text text, .role-title-text tspan")]
    .filter((t) => t.querySelector("tspan") === null)
    .map((t) => (t.textContent ?? "").trim())
    .filter((t) => t !== "")
  const name = lines.length === 0 ? "Chart of the answer" : lines.join(". ")
  caption.textContent = name
  container.setAttribute("role", "img")
  container.setAttribute("aria-label", name)
  for (const svg of container.querySelectorAll("svg")) svg.setAttribute("aria-hidden", "true")
  return name
}

const cell = (value: unknown): string =>
  value === null ? "withheld (null)" : typeof value === "number" ? String(Math.round(value * 1e6) / 1e6) : typeof value === "object" ? JSON.stringify(value) : String(value)

/** The tables of a view as HTML tables (one per table with rows), for reading the numbers the chart draws. */
export const chartTables = (view: PluginView, request: unknown, answer: unknown): HTMLElement => {
  const box = document.createElement("div")
  for (const [name, table] of Object.entries(view.data)) {
    const rows = tableRows(table, request, answer)
    if (rows.length === 0) continue
    const columns = [...new Set(rows.flatMap((r) => Object.keys(r)))]
    const t = document.createElement("table")
    t.createCaption().textContent = `${name} (${table.from})`
    const head = t.createTHead().insertRow()
    for (const c of columns) {
      const th = document.createElement("th")
      th.scope = "col"
      th.textContent = c
      head.append(th)
    }
    const body = t.createTBody()
    for (const r of rows) {
      const tr = body.insertRow()
      for (const c of columns) tr.insertCell().textContent = c in r ? cell(r[c]) : ""
    }
    box.append(t)
  }
  return box
}
