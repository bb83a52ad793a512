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
 * The self-contained Vega-Lite specification of an answer: the view's specification with its
 * tables inlined (`datasets`), ready for vega-embed, JupyterLab's Vega-Lite renderer or `vega`.
 */
export const viewSpec = (view: PluginView, request: unknown, answer: unknown): Record<string, unknown> => {
  const tables = Object.entries(view.data).map(([name, table]) => [name, table, tableRows(table, request, answer)] as const)
  const params = tables.map(([name, table, rows]) => ({ name, value: table.rows === "object" ? rows[0] ?? {} : rows }))
  const own = Array.isArray(view.spec["params"]) ? view.spec["params"] as ReadonlyArray<unknown> : []
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    ...view.spec,
    ...(params.length + own.length > 0 ? { params: [...params, ...own] } : {}),
    datasets: Object.fromEntries(tables.map(([name, , rows]) => [name, rows]))
  }
}
