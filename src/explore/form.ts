/**
 * The explorer's form, made from an endpoint's request schema (the OpenAPI document's JSON Schema):
 * nested objects become groups of fields, each field named by its JSON pointer into the body — the
 * pointer a 422's `errors[].path` names, so a problem is shown at its field. A string whose
 * description names `catalog vocabulary \`<name>\`` picks from that vocabulary of the catalog, its
 * standard codes included (docs/explore.md). What the form cannot show as a field (an object of
 * open keys, an array of objects) is one JSON field. Pure: the page (app.ts) draws these.
 */

type Json = Record<string, unknown>

/** A field of the form. */
export type Field =
  & {
    /** JSON pointer (RFC 6901) into the request body. */
    readonly pointer: string
    readonly label: string
    readonly description: string
    readonly required: boolean
  }
  & (
    | { readonly kind: "choice"; readonly options: ReadonlyArray<string> }
    | { readonly kind: "choices"; readonly options: ReadonlyArray<string> }
    | { readonly kind: "vocabulary"; readonly vocabulary: string; readonly multiple: boolean }
    | { readonly kind: "number"; readonly integer: boolean; readonly minimum?: number; readonly maximum?: number }
    | { readonly kind: "numbers" }
    | { readonly kind: "boolean" }
    | { readonly kind: "text"; readonly pattern?: string }
    | { readonly kind: "json" }
  )

/** A group of fields: one per object of the body (the body itself is the group at ""). */
export interface Group {
  readonly pointer: string
  readonly label: string
  readonly description: string
  readonly fields: ReadonlyArray<Field>
}

const isObject = (x: unknown): x is Json => typeof x === "object" && x !== null && !Array.isArray(x)

/** A schema with its `$ref` followed and a nullable or single-branch union reduced to its one branch. */
export const resolve = (schema: unknown, document: Json): Json => {
  let s: unknown = schema
  for (let hops = 0; hops < 16 && isObject(s); hops++) {
    const ref = s["$ref"]
    if (typeof ref === "string" && ref.startsWith("#/")) {
      let here: unknown = document
      for (const part of ref.slice(2).split("/")) here = isObject(here) ? here[part.replaceAll("~1", "/").replaceAll("~0", "~")] : undefined
      s = here
      continue
    }
    const union = Array.isArray(s["anyOf"]) ? s["anyOf"] : Array.isArray(s["oneOf"]) ? s["oneOf"] : undefined
    const branches = union?.filter((b) => !(isObject(b) && b["type"] === "null")) ?? []
    if (union !== undefined && branches.length === 1) {
      s = { ...s, ...(branches[0] as Json), anyOf: undefined, oneOf: undefined }
      continue
    }
    return s
  }
  return isObject(s) ? s : {}
}

const VOCABULARY = /catalog vocabulary `([a-z_]+)`/

const escapePointer = (key: string) => key.replaceAll("~", "~0").replaceAll("/", "~1")

/** The field for one leaf of the schema. */
const fieldOf = (pointer: string, label: string, required: boolean, raw: unknown, document: Json): Field => {
  const s = resolve(raw, document)
  const description = typeof s["description"] === "string" ? s["description"] : ""
  const base = { pointer, label, required, description }
  const vocabulary = VOCABULARY.exec(description)?.[1]
  if (s["type"] === "string") {
    if (Array.isArray(s["enum"])) return { ...base, kind: "choice", options: s["enum"].map(String) }
    if (vocabulary !== undefined) return { ...base, kind: "vocabulary", vocabulary, multiple: false }
    return typeof s["pattern"] === "string" ? { ...base, kind: "text", pattern: s["pattern"] } : { ...base, kind: "text" }
  }
  if (s["type"] === "number" || s["type"] === "integer") {
    return {
      ...base,
      kind: "number",
      integer: s["type"] === "integer",
      ...(typeof s["minimum"] === "number" ? { minimum: s["minimum"] } : {}),
      ...(typeof s["maximum"] === "number" ? { maximum: s["maximum"] } : {})
    }
  }
  if (s["type"] === "boolean") return { ...base, kind: "boolean" }
  if (s["type"] === "array") {
    const item = resolve(s["items"], document)
    const itemDescription = typeof item["description"] === "string" ? item["description"] : ""
    const itemVocabulary = vocabulary ?? VOCABULARY.exec(itemDescription)?.[1]
    if (item["type"] === "string" && Array.isArray(item["enum"])) return { ...base, kind: "choices", options: item["enum"].map(String) }
    if (item["type"] === "string" && itemVocabulary !== undefined) return { ...base, kind: "vocabulary", vocabulary: itemVocabulary, multiple: true }
    if (item["type"] === "number" || item["type"] === "integer") return { ...base, kind: "numbers" }
  }
  return { ...base, kind: "json" }
}

/** The groups of fields of a request schema, depth first (a group before the groups inside it). */
export const groupsOf = (schema: unknown, document: Json): ReadonlyArray<Group> => {
  const groups: Array<Group> = []
  const visit = (pointer: string, label: string, raw: unknown) => {
    const s = resolve(raw, document)
    const properties = isObject(s["properties"]) ? s["properties"] : {}
    const required = new Set(Array.isArray(s["required"]) ? s["required"].map(String) : [])
    const fields: Array<Field> = []
    const inner: Array<readonly [string, string, unknown]> = []
    for (const [key, value] of Object.entries(properties)) {
      const child = resolve(value, document)
      const at = `${pointer}/${escapePointer(key)}`
      if (child["type"] === "object" && isObject(child["properties"]) && Object.keys(child["properties"]).length > 0) inner.push([at, key, value])
      else fields.push(fieldOf(at, key, required.has(key), value, document))
    }
    groups.push({ pointer, label, description: typeof s["description"] === "string" ? s["description"] : "", fields })
    for (const [at, key, value] of inner) visit(at, label === "" ? key : `${label} › ${key}`, value)
  }
  visit("", "", schema)
  return groups
}

/** What a field holds in the form: text (a list comma-separated), a box ticked, or options picked. */
export type Raw = string | boolean | ReadonlyArray<string>

/** The value a field's raw input stands for; undefined when it is left empty (the API's default applies). */
export const parseRaw = (field: Field, raw: Raw): { readonly value?: unknown; readonly error?: string } => {
  if (field.kind === "boolean") return raw === true ? { value: true } : {}
  if (field.kind === "choices") return Array.isArray(raw) && raw.length > 0 ? { value: [...raw] } : {}
  const text = typeof raw === "string" ? raw.trim() : ""
  if (text === "") return {}
  switch (field.kind) {
    case "number": {
      const n = Number(text)
      return Number.isFinite(n) ? { value: n } : { error: "not a number" }
    }
    case "numbers": {
      const xs = text.split(/[\s,;]+/).filter((t) => t !== "").map(Number)
      return xs.every(Number.isFinite) ? { value: xs } : { error: "not a list of numbers" }
    }
    case "vocabulary":
      return field.multiple ? { value: text.split(/[\s,]+/).filter((t) => t !== "") } : { value: text }
    case "json":
      try {
        return { value: JSON.parse(text) }
      } catch {
        return { error: "not JSON" }
      }
    default:
      return { value: text }
  }
}

/** The raw input that shows a value (the inverse of parseRaw). */
export const rawOf = (field: Field, value: unknown): Raw => {
  if (value === undefined) return field.kind === "boolean" ? false : field.kind === "choices" ? [] : ""
  switch (field.kind) {
    case "boolean":
      return value === true
    case "choices":
      return Array.isArray(value) ? value.map(String) : []
    case "numbers":
      return Array.isArray(value) ? value.join(", ") : ""
    case "vocabulary":
      return Array.isArray(value) ? value.join(", ") : String(value)
    case "json":
      return JSON.stringify(value)
    default:
      return String(value)
  }
}

/** The value at a pointer in a body. */
export const valueAt = (body: unknown, pointer: string): unknown => {
  let here = body
  for (const part of pointer.split("/").slice(1)) {
    if (!isObject(here)) return undefined
    here = here[part.replaceAll("~1", "/").replaceAll("~0", "~")]
  }
  return here
}

/** Sets a value at a pointer, making the objects on the way. */
const setAt = (body: Json, pointer: string, value: unknown) => {
  const parts = pointer.split("/").slice(1).map((p) => p.replaceAll("~1", "/").replaceAll("~0", "~"))
  let here = body
  for (const part of parts.slice(0, -1)) here = isObject(here[part]) ? here[part] as Json : (here[part] = {}) as Json
  here[parts[parts.length - 1]!] = value
}

/** The request body of a form's raw inputs (by pointer), and each input that does not parse. */
export const bodyOf = (groups: ReadonlyArray<Group>, raws: ReadonlyMap<string, Raw>): { readonly body: Json; readonly errors: ReadonlyMap<string, string> } => {
  const body: Json = {}
  const errors = new Map<string, string>()
  for (const field of groups.flatMap((g) => g.fields)) {
    const parsed = parseRaw(field, raws.get(field.pointer) ?? rawOf(field, undefined))
    if (parsed.error !== undefined) errors.set(field.pointer, parsed.error)
    else if ("value" in parsed) setAt(body, field.pointer, parsed.value)
  }
  return { body, errors }
}

/**
 * The field a problem's pointer concerns: the field itself, the field of the list or object it lies
 * in (`/axes/2` → `/axes`), or none (the problem is the whole request's).
 */
export const fieldFor = (groups: ReadonlyArray<Group>, pointer: string): Field | undefined => {
  const fields = groups.flatMap((g) => g.fields)
  for (let at = pointer; at !== ""; at = at.slice(0, at.lastIndexOf("/"))) {
    const field = fields.find((f) => f.pointer === at)
    if (field !== undefined) return field
  }
  return undefined
}
