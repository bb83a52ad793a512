/**
 * Draws a view (src/plugin/view.ts) in the browser: the Vega-Lite specification compiled to Vega
 * and run with Vega's expression interpreter (`vega-interpreter`), not its code generator — the
 * explorer's Content-Security-Policy allows no `eval` — into SVG, which screen readers and tests
 * can read. Beside it, each table the chart draws as an HTML table.
 */
import * as vega from "vega"
import { expressionInterpreter } from "vega-interpreter"
import { compile, type TopLevelSpec } from "vega-lite"
import { chartSpec, type PluginView, tableRows } from "../plugin/view.ts"

/**
 * Draws the chart of an answer into `container` (`minCellSize`: the catalog's threshold, which the
 * chart names where the answer withholds a value); the running view (finalize it before drawing again).
 */
export const drawChart = async (container: HTMLElement, view: PluginView, request: unknown, answer: unknown, minCellSize?: number): Promise<vega.View> => {
  // Vega-Lite's warnings (a facet's layers that share their rows, say) are not the reader's concern.
  const compiled = compile(chartSpec(view, request, answer, minCellSize) as unknown as TopLevelSpec, { logger: vega.logger(vega.Error) }).spec
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
 * Names a drawn chart for every reader: its title's lines (the withheld line among them) become the figure's caption and the
 * chart's accessible name (role img), and the SVG inside is hidden from assistive technology — read
 * one by one, its tick labels and marks are noise ("stretch: 0"); the tables beside it hold the
 * numbers.
 */
export const nameChart = (container: HTMLElement, caption: HTMLElement): string => {
  const lines = [...container.querySelectorAll(".role-title-text text, .role-title-text tspan, .role-title-subtitle text, .role-title-subtitle tspan")]
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

/**
 * Saves what a drawn chart shows as a file named `name`: SVG (vector, as drawn) or PNG (twice the
 * pixels, for slides and print) — what vega-embed's actions do, without its bundle.
 */
export const saveChart = async (runtime: vega.View, kind: "svg" | "png", name: string): Promise<void> => {
  const url = kind === "svg" ? URL.createObjectURL(new Blob([await runtime.toSVG()], { type: "image/svg+xml" })) : await runtime.toImageURL("png", 2)
  const link = Object.assign(document.createElement("a"), { href: url, download: `${name}.${kind}` })
  document.body.append(link)
  link.click()
  link.remove()
  if (kind === "svg") queueMicrotask(() => URL.revokeObjectURL(url))
}

const cell = (value: unknown, withheld: string): string =>
  value === null ? withheld : typeof value === "number" ? String(Math.round(value * 1e6) / 1e6) : typeof value === "object" ? JSON.stringify(value) : String(value)

/**
 * The tables of a view as HTML, for reading the numbers the chart draws: a list of sentences (a
 * `values` table of text, as clinical's reasoning chain) as a numbered list, read whole where the
 * chart has room for a line of each; every other table with rows as a table, a withheld value
 * written "withheld (fewer than N)".
 */
export const chartTables = (view: PluginView, request: unknown, answer: unknown, minCellSize?: number): HTMLElement => {
  const box = document.createElement("div")
  const withheld = minCellSize === undefined ? "withheld (small cell)" : `withheld (fewer than ${minCellSize})`
  for (const [name, table] of Object.entries(view.data)) {
    const rows = tableRows(table, request, answer)
    if (rows.length === 0) continue
    if (table.rows === "values" && rows.every((r) => typeof r["value"] === "string")) {
      const heading = document.createElement("p")
      heading.className = "list-caption"
      heading.textContent = `${name} (${table.from})`
      const list = document.createElement("ol")
      for (const r of rows) list.append(Object.assign(document.createElement("li"), { textContent: r["value"] as string }))
      box.append(heading, list)
      continue
    }
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
      for (const c of columns) tr.insertCell().textContent = c in r ? cell(r[c], withheld) : ""
    }
    box.append(t)
  }
  return box
}
