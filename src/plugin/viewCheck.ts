/**
 * Whether a plugin's `view` (view.ts) fits its request and response schemas, checked when the
 * plugin loads: each table's pointer reaches a field of its kind, the fields the Vega-Lite
 * specification names are fields of its tables or made by its transforms, and the tables it names
 * are declared; viewCompile.ts then compiles it. A view that does not fit stops start-up like any
 * other broken rule, so a drawing never silently loses a field the answer stopped carrying.
 */
import type * as Schema from "effect/Schema"
import { type JsonSchema, type JsonSchemaDocument, jsonSchemaDocument, resolveSchema, schemasAt } from "./jsonSchemaAt.ts"
import { type PluginView, VIEW_VERSION, type ViewRows } from "./view.ts"

const ROWS: ReadonlyArray<ViewRows> = ["items", "entries", "series", "values", "object"]

/**
 * Fields the platform adds to any answer, in no plugin's schema: what the small-cell rule withheld
 * (`suppressed`, JSON pointers; the view representation's own in `view_data.suppressed`). A view
 * may read either as a `values` table, to say on the chart that something is withheld.
 */
const PLATFORM_LISTS = new Set(["/answer/suppressed", "/answer/view_data/suppressed"])

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === "object" && x !== null && !Array.isArray(x)

/** The schemas a pointer's target may take (every branch of an anyOf), resolved through $ref. */
const flatten = (doc: JsonSchemaDocument, schemas: ReadonlyArray<JsonSchema>): Array<JsonSchema> => schemas.flatMap((s) => resolveSchema(doc, s))

const typed = (schemas: ReadonlyArray<JsonSchema>, type: string) => schemas.filter((s) => s["type"] === type)
const propertiesOf = (s: JsonSchema) => Object.keys((s["properties"] ?? {}) as object)

/**
 * The fields of a table's rows, or `open` when the schema does not list them all (a map with
 * computed keys); a reason when the pointer reaches nothing of the table's kind.
 */
const tableFields = (doc: JsonSchemaDocument, pointer: string, rows: ViewRows): { readonly fields: ReadonlySet<string> | "open" } | string => {
  const at = flatten(doc, schemasAt(doc, pointer))
  if (at.length === 0) return "names no field"
  const arrays = typed(at, "array")
  const objects = typed(at, "object")
  // A map (additionalProperties, no properties) has keys no schema lists; a struct's fields are its properties.
  const open = (s: JsonSchema) => s["properties"] === undefined && s["additionalProperties"] !== undefined && s["additionalProperties"] !== false
  switch (rows) {
    case "items": {
      const items = flatten(doc, arrays.flatMap((a) => (isObject(a["items"]) ? [a["items"] as JsonSchema] : []))).filter((s) => s["type"] === "object")
      if (items.length === 0) return "is not an array of objects"
      return { fields: items.some(open) ? "open" : new Set(items.flatMap(propertiesOf)) }
    }
    case "entries": {
      if (objects.length === 0) return "is not an object"
      const members = flatten(doc, objects.flatMap((o) => [...Object.values((o["properties"] ?? {}) as Record<string, JsonSchema>), ...(isObject(o["additionalProperties"]) ? [o["additionalProperties"] as JsonSchema] : [])]))
      const memberObjects = members.filter((m) => m["type"] === "object")
      if (memberObjects.some(open)) return { fields: "open" }
      return { fields: new Set(["key", ...(members.some((m) => m["type"] !== "object") ? ["value"] : []), ...memberObjects.flatMap(propertiesOf)]) }
    }
    case "series":
      if (objects.length === 0) return "is not an object of arrays"
      return { fields: new Set(["key", "index", "value", "length"]) }
    case "values":
      if (arrays.length === 0) return "is not an array"
      return { fields: new Set(["index", "value"]) }
    case "object":
      if (objects.length === 0) return "is not an object"
      return { fields: objects.some(open) ? "open" : new Set(objects.flatMap(propertiesOf)) }
  }
}

/** Every value of `key` anywhere in a specification (fields named, tables named, names made). */
const collect = (node: unknown, visit: (key: string, value: unknown, parent: Record<string, unknown>) => void): void => {
  if (Array.isArray(node)) for (const x of node) collect(x, visit)
  else if (isObject(node)) {
    for (const [k, v] of Object.entries(node)) {
      visit(k, v, node)
      collect(v, visit)
    }
  }
}

/** Why a view does not fit the plugin's schemas, or undefined; whether its specification compiles is viewCompile.ts's. */
export const checkView = (declaration: unknown, request: Schema.Top, response: Schema.Top): string | undefined => {
  if (!isObject(declaration)) return "view is not an object"
  const view = declaration as unknown as PluginView
  if (view.version !== VIEW_VERSION) return `view.version ${JSON.stringify(view.version)} is not ${VIEW_VERSION}`
  if (!isObject(view.data) || Object.keys(view.data).length === 0) return "view.data must name at least one table"
  if (!isObject(view.spec)) return "view.spec is not a Vega-Lite specification (an object)"
  const docs = { request: jsonSchemaDocument(request), answer: jsonSchemaDocument(response) }
  const known = new Set<string>()
  let open = false
  for (const [name, table] of Object.entries(view.data)) {
    if (!isObject(table) || typeof table.from !== "string") return `view.data.${name} needs \`from\`, a JSON pointer into /request or /answer`
    const root = /^\/(request|answer)(\/|$)/.exec(table.from)
    if (root === null) return `view.data.${name}.from ${JSON.stringify(table.from)} does not start with /request or /answer`
    if (!ROWS.includes(table.rows)) return `view.data.${name}.rows ${JSON.stringify(table.rows)} is not one of ${ROWS.join(", ")}`
    if (PLATFORM_LISTS.has(table.from)) {
      if (table.rows !== "values") return `view.data.${name}.from ${table.from} is a list of pointers (rows: values)`
      known.add("index")
      known.add("value")
      continue
    }
    const fields = tableFields(docs[root[1] as "request" | "answer"], table.from.slice(root[0].length - (root[2] === "/" ? 1 : 0)), table.rows)
    if (typeof fields === "string") return `view.data.${name}.from ${table.from} ${fields}${fields === "names no field" ? ` of the ${root[1]}` : ` (rows: ${table.rows})`}`
    if (fields.fields === "open") open = true
    else for (const f of fields.fields) known.add(f)
  }
  const problems: Array<string> = []
  const named = new Set<string>()
  collect(view.spec, (key, value, parent) => {
    if (key === "data" && isObject(value)) {
      if (typeof value.name === "string") named.add(value.name)
      else problems.push("view.spec's data must name a table of view.data (`data: { name }`), not hold values")
    }
    // Names the specification makes: transforms' `as`, params, fold's default key and value.
    if (key === "as") for (const a of Array.isArray(value) ? value : [value]) if (typeof a === "string") known.add(a)
    if (key === "fold" && parent.as === undefined) known.add("key").add("value")
    if (key === "params" && Array.isArray(value)) for (const p of value) if (isObject(p) && typeof p.name === "string") known.add(p.name)
  })
  for (const n of named) if (!(n in view.data)) problems.push(`view.spec names the table ${JSON.stringify(n)}, which view.data does not declare`)
  if (!open) {
    collect(view.spec, (key, value) => {
      if (key === "field" && typeof value === "string") {
        const head = value.split(".")[0]!.replaceAll("\\", "")
        if (!known.has(head)) problems.push(`view.spec names the field ${JSON.stringify(value)}, which no table has (${[...known].sort().join(", ")})`)
      }
    })
  }
  return problems[0]
}
