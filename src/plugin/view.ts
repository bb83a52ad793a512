/**
 * How an answer is drawn, declared as data: a Vega-Lite specification (https://vega.github.io/vega-lite/)
 * over named tables that the host makes from the request and the answer by JSON pointer. A plugin
 * declares one in its contract (`view`); the built-ins declare theirs the same way. The service
 * checks a view against the request and response schemas when the plugin loads (a field the
 * specification names that no table has stops start-up); `viewSpec` makes the self-contained
 * specification (tables inlined) that the explorer, the clients and Jupyter draw.
 *
 * Tables (`data`), each from a pointer into `/request` or `/answer`:
 * - `items`: an array of objects → one row per object (its fields);
 * - `entries`: an object → one row per member: `key`, and the member's fields when it is an
 *   object, else `value`;
 * - `series`: an object of arrays of numbers → one row per number: `key`, `index` (from 0),
 *   `value` and `length` (of its array: where a series given in the request ends);
 * - `values`: an array of scalars → one row per value: `index`, `value`;
 * - `object`: an object → one row of its scalar fields.
 *
 * Each table is also a parameter of its name, for titles and labels: an `object` table its row
 * (`{ expr: "summary.cohort_size" }`), another its rows (`{ expr: "length(rules)" }`) — Vega-Lite
 * leaves a table no mark draws out of what it compiles, so `data('name')` cannot reach it.
 *
 * The specification's `description` (what a screen reader announces, the chart's alternative
 * text) and any text `title` (an axis's, a legend's) may name values by pointer,
 * `{/answer/probability|.1%}`, with a text for when the pointer reaches nothing,
 * `{/request/interval?monthly}`: the host writes each in (`describe`). And wherever an answer
 * lists fields withheld by the small-cell rule, the host adds a subtitle line naming the rule and
 * its threshold (`withheldLine`): every chart says why a value is missing, whatever its view.
 */

/** The media type of an answer's view representation: the answer and its `view_data` (viewData.ts). */
export const VIEW_MEDIA_TYPE = "application/vnd.hcc.view+json"

/** The version of the view declaration this service reads. */
export const VIEW_VERSION = 1

/** How a table's rows are made from the value a pointer reaches. */
export type ViewRows = "items" | "entries" | "series" | "values" | "object"

/** One table of a view. */
export interface ViewTable {
  /** A JSON pointer (RFC 6901) starting `/request` or `/answer`; `/answer` alone is the whole answer. */
  readonly from: string
  readonly rows: ViewRows
}

/** A view: the Vega-Lite specification (its `data` names the tables) and the tables it draws. */
export interface PluginView {
  readonly version: typeof VIEW_VERSION
  /** The tables, by name (the names the specification's `data: { name }` uses). */
  readonly data: Readonly<Record<string, ViewTable>>
  /** A Vega-Lite specification without data values (`$schema` optional). */
  readonly spec: Readonly<Record<string, unknown>>
}

type Row = Record<string, unknown>

/** The value a JSON pointer reaches in a document, or undefined. */
export const atPointer = (document: unknown, pointer: string): unknown => {
  if (pointer === "") return document
  let here: unknown = document
  for (const raw of pointer.slice(1).split("/")) {
    const segment = raw.replaceAll("~1", "/").replaceAll("~0", "~")
    if (typeof here !== "object" || here === null) return undefined
    here = (here as Record<string, unknown>)[segment]
  }
  return here
}

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === "object" && x !== null && !Array.isArray(x)
const scalars = (o: Record<string, unknown>): Row => Object.fromEntries(Object.entries(o).filter(([, v]) => !isObject(v) && !Array.isArray(v)))

/** The rows of one table (module comment); nothing where the pointer reaches nothing of its kind. */
export const tableRows = (table: ViewTable, request: unknown, answer: unknown): Array<Row> => {
  const value = atPointer({ request, answer }, table.from)
  switch (table.rows) {
    case "items":
      return Array.isArray(value) ? value.filter(isObject).map((o) => ({ ...o })) : []
    case "entries":
      return isObject(value) ? Object.entries(value).map(([key, v]) => (isObject(v) ? { key, ...scalars(v) } : { key, value: v })) : []
    case "series":
      return isObject(value)
        ? Object.entries(value).flatMap(([key, xs]) => (Array.isArray(xs) ? xs.map((x, index) => ({ key, index, value: x, length: xs.length })) : []))
        : []
    case "values":
      return Array.isArray(value) ? value.map((x, index) => ({ index, value: x })) : []
    case "object":
      return isObject(value) ? [scalars(value)] : []
  }
}

/**
 * `{pointer}`, `{pointer?absent}` or `{pointer|format}` in a description or a title; format: `,`
 * (thousands), `.N` digits (0 unless given), `f` (the default) or `%`.
 */
const PLACEHOLDER = /\{(\/[^{}|?]*)(?:\?([^{}|]*))?(?:\|(,?)(?:\.(\d))?([f%]?))?\}/g

/** A number as a format asks (fixed digits, or per cent), ties rounded away from zero as `toFixed` does. */
const formatNumber = (x: number, grouped: boolean, digits: number, percent: boolean): string => {
  const [whole, fraction] = (percent ? x * 100 : x).toFixed(digits).split(".") as [string, string | undefined]
  const withCommas = grouped ? whole.replace(/\B(?=(\d{3})+(?!\d))/g, ",") : whole
  return `${withCommas}${fraction === undefined ? "" : `.${fraction}`}${percent ? "%" : ""}`
}

/** One value written into a description: null (withheld by the small-cell rule) as "withheld". */
const written = (value: unknown, absent: string | undefined, format: { readonly grouped: boolean; readonly digits: number; readonly percent: boolean } | undefined): string => {
  if (value === null) return "withheld"
  if (value === undefined) return absent ?? "not given"
  if (typeof value === "number" && format !== undefined) return formatNumber(value, format.grouped, format.digits, format.percent)
  return typeof value === "object" ? JSON.stringify(value) : String(value)
}

/** A description with each `{pointer|format}` written in from the request and the answer (module comment). */
export const describe = (template: string, request: unknown, answer: unknown): string =>
  template.replace(PLACEHOLDER, (_, pointer: string, absent?: string, grouped?: string, digits?: string, kind?: string) =>
    written(
      atPointer({ request, answer }, pointer),
      absent,
      grouped === undefined && kind === undefined ? undefined : { grouped: grouped === ",", digits: Number(digits ?? 0), percent: kind === "%" }
    ))

/**
 * The line a chart of an answer with withheld fields carries: how many, and the rule with its
 * threshold in force (the catalog's `disclosure.min_cell_size`, `HCC_MIN_CELL_SIZE`) where the
 * host knows it; undefined when nothing was withheld.
 */
export const withheldLine = (answer: unknown, minCellSize?: number): string | undefined => {
  const count = (o: unknown) => (isObject(o) && Array.isArray(o["suppressed"]) ? o["suppressed"].length : 0)
  // The answer's own fields are listed in its `suppressed`, its view data's in `view_data.suppressed`.
  const listed = count(answer) + (isObject(answer) ? count(answer["view_data"]) : 0)
  if (listed === 0) return undefined
  const rule = minCellSize === undefined ? "fewer patients than the minimum cell size" : `fewer than ${minCellSize} patients`
  return `Withheld: ${listed} ${listed === 1 ? "value rests" : "values rest"} on ${rule} (the small-cell rule)`
}

/**
 * A specification with its description and every text title written in (`describe`): a string or
 * strings under `title`, or its `text` and `subtitle` when a title is an object; never an expression.
 */
const writtenIn = (node: unknown, request: unknown, answer: unknown, text = false): unknown => {
  if (typeof node === "string") return text ? describe(node, request, answer) : node
  if (Array.isArray(node)) return node.map((x) => writtenIn(x, request, answer, text))
  if (!isObject(node)) return node
  return Object.fromEntries(Object.entries(node).map(([k, v]) => [
    k,
    k === "title" && isObject(v)
      ? Object.fromEntries(Object.entries(v).map(([tk, tv]) => [tk, writtenIn(tv, request, answer, tk === "text" || tk === "subtitle")]))
      : writtenIn(v, request, answer, k === "title" || k === "description")
  ]))
}

/** The view's title with `line` added as (the last line of) its subtitle. */
const withSubtitle = (title: unknown, line: string): Record<string, unknown> => {
  const base = isObject(title) ? title : title === undefined ? { text: "" } : { text: title }
  const before = base["subtitle"]
  const lines = before === undefined ? [] : Array.isArray(before) ? before : [before]
  return { ...base, subtitle: [...lines, line] }
}

/**
 * The self-contained Vega-Lite specification of an answer: the view's specification with its
 * tables inlined (`datasets`), its description and titles written in, and a subtitle line where
 * the answer withholds a value — ready for vega-embed, JupyterLab's Vega-Lite renderer or `vega`.
 * `minCellSize` is the threshold in force, when the host knows it (the catalog's).
 */
export const chartSpec = (view: PluginView, request: unknown, answer: unknown, minCellSize?: number): Record<string, unknown> => {
  const tables = Object.entries(view.data).map(([name, table]) => [name, table, tableRows(table, request, answer)] as const)
  const params = tables.map(([name, table, rows]) => ({ name, value: table.rows === "object" ? rows[0] ?? {} : rows }))
  const own = Array.isArray(view.spec["params"]) ? view.spec["params"] as ReadonlyArray<unknown> : []
  const spec = writtenIn(view.spec, request, answer) as Record<string, unknown>
  const withheld = withheldLine(answer, minCellSize)
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    ...spec,
    ...(withheld === undefined ? {} : { title: withSubtitle(spec["title"], withheld) }),
    ...(params.length + own.length > 0 ? { params: [...params, ...own] } : {}),
    datasets: Object.fromEntries(tables.map(([name, , rows]) => [name, rows]))
  }
}

/** {@link chartSpec} where the threshold in force is not known (the withheld line then names none). */
export const viewSpec = (view: PluginView, request: unknown, answer: unknown): Record<string, unknown> => chartSpec(view, request, answer)
