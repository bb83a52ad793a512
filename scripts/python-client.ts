/**
 * Generates the Python client's types and endpoint methods (clients/python/src/hcc_client/_generated.py)
 * from the service's OpenAPI document — the document the server serves, built here from the same
 * plugins, without a network. `npm run client:python` rewrites the file; a test fails when the file
 * is not what this script makes of the current document.
 *
 * Mapping (JSON Schema → Python ≥ 3.9 typing): string/integer/number/boolean → str/int/float/bool;
 * an `enum` or `const` → Literal; `anyOf` with null → Optional; an array → List; an object with
 * properties → a TypedDict in requests and an `Answer` class (a dict with typed properties) in
 * responses; an object of `additionalProperties` only → Dict[str, …].
 */
import * as OpenApi from "effect/http-api/OpenApi"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import builtins from "../plugins/index.ts"
import { makeApi } from "../src/http/Api.ts"

type Json = Record<string, any>

/** Where the generated module lives. */
export const GENERATED_PATH = join(import.meta.dirname, "../clients/python/src/hcc_client/_generated.py")

/** Keyword arguments the client's methods take besides the API's fields (they must never collide). */
export const CLIENT_KEYWORDS = ["idempotency_key", "timeout"] as const

/** The OpenAPI document of the built-in plugins, as the server serves it. */
export const builtinDocument = (): Json => OpenApi.fromApi(makeApi(builtins, { version: "0.0.0" }) as any) as Json

const PY_KEYWORDS = new Set([
  "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del", "elif", "else", "except",
  "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try",
  "while", "with", "yield"
])
const isIdentifier = (name: string) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) && !PY_KEYWORDS.has(name)
const pascal = (s: string) => s.split(/[^A-Za-z0-9]+/).filter((w) => w !== "").map((w) => w[0]!.toUpperCase() + w.slice(1)).join("")
const snake = (s: string) => s.replaceAll("-", "_")
const literal = (v: unknown) => (typeof v === "string" ? JSON.stringify(v) : v === true ? "True" : v === false ? "False" : v === null ? "None" : String(v))
/** A docstring-safe, one-paragraph text. */
const doc = (s: string | undefined) => (s ?? "").replaceAll("\\", "\\\\").replaceAll('"""', "'''").replace(/\s+/g, " ").trim()

/** The generated module, built up class by class (each class before its first use). */
class Module {
  readonly blocks: Array<string> = []
  readonly names = new Set<string>()

  readonly document: Json
  constructor(document: Json) {
    this.document = document
  }

  resolve(schema: Json): Json {
    if (typeof schema.$ref === "string") return this.resolve(this.document.components.schemas[schema.$ref.split("/").at(-1)!])
    return schema
  }

  unique(name: string): string {
    let n = name
    for (let i = 2; this.names.has(n); i++) n = `${name}${i}`
    this.names.add(n)
    return n
  }

  /** The Python type of a schema; `side` says whether objects become TypedDicts or Answers. */
  type(input: Json, name: string, side: "request" | "response"): string {
    const schema = this.resolve(input)
    if (Array.isArray(schema.anyOf)) {
      const branches = (schema.anyOf as Array<Json>).map((s) => this.resolve(s))
      const nullable = branches.some((b) => b.type === "null")
      const rest = branches.filter((b) => b.type !== "null")
      const inner = rest.length === 1 ? this.type(rest[0]!, name, side) : rest.length === 0 ? "None" : `Union[${[...new Set(rest.map((b, i) => this.type(b, `${name}${i + 1}`, side)))].join(", ")}]`
      return nullable ? `Optional[${inner}]` : inner
    }
    if (Array.isArray(schema.enum)) return `Literal[${schema.enum.map(literal).join(", ")}]`
    if ("const" in schema) return `Literal[${literal(schema.const)}]`
    switch (schema.type) {
      case "string":
        return "str"
      case "integer":
        return "int"
      case "number":
        return "float"
      case "boolean":
        return "bool"
      case "null":
        return "None"
      case "array":
        if (Array.isArray(schema.prefixItems)) {
          const items = [...new Set((schema.prefixItems as Array<Json>).map((s) => this.type(s, `${name}Item`, side)))]
          return `List[${items.length === 1 ? items[0] : `Union[${items.join(", ")}]`}]`
        }
        return `List[${schema.items === undefined ? "Any" : this.type(schema.items, `${name}Item`, side)}]`
      case "object": {
        const properties = (schema.properties ?? {}) as Record<string, Json>
        if (Object.keys(properties).length === 0) {
          const extra = schema.additionalProperties
          return `Dict[str, ${typeof extra === "object" ? this.type(extra, `${name}Value`, side) : "Any"}]`
        }
        return this.classFor(schema, name, side)
      }
      default:
        return "Any"
    }
  }

  /** Classes made so far, by side and schema: one class for schemas that are the same. */
  readonly made = new Map<string, string>()

  /** The class of an object schema on one side, made once. */
  classFor(schema: Json, name: string, side: "request" | "response"): string {
    const key = `${side} ${JSON.stringify(schema)}`
    let cls = this.made.get(key)
    if (cls === undefined) {
      cls = side === "request" ? this.typedDict(schema, name) : this.answer(schema, name)
      this.made.set(key, cls)
    }
    return cls
  }

  /** A TypedDict for a request object: required keys in a base class, optional ones after (Python < 3.11 has no NotRequired). */
  typedDict(schema: Json, name: string): string {
    const cls = this.unique(name)
    const properties = Object.entries(schema.properties as Record<string, Json>)
    const required = new Set<string>(schema.required ?? [])
    const fields = properties.map(([key, s]) => ({ key, type: this.type(s, `${cls}${pascal(key)}`, "request"), required: required.has(key) }))
    const lines: Array<string> = []
    const described = doc(schema.description)
    if (fields.every((f) => isIdentifier(f.key))) {
      const must = fields.filter((f) => f.required)
      const may = fields.filter((f) => !f.required)
      if (must.length > 0 && may.length > 0) {
        lines.push(`class _${cls}Required(TypedDict):`, ...must.map((f) => `    ${f.key}: ${f.type}`), "", "")
        lines.push(`class ${cls}(_${cls}Required, total=False):`)
        if (described !== "") lines.push(`    """${described}"""`, "")
        lines.push(...may.map((f) => `    ${f.key}: ${f.type}`))
      } else {
        lines.push(`class ${cls}(TypedDict${must.length === 0 ? ", total=False" : ""}):`)
        if (described !== "") lines.push(`    """${described}"""`, "")
        lines.push(...fields.map((f) => `    ${f.key}: ${f.type}`))
      }
    } else {
      lines.push(`${cls} = TypedDict("${cls}", {${fields.map((f) => `${JSON.stringify(f.key)}: ${f.type}`).join(", ")}}, total=False)`)
    }
    this.blocks.push(lines.join("\n"))
    return cls
  }

  /** An Answer subclass for a response object: the JSON mapping, with a typed property per field. */
  answer(schema: Json, name: string): string {
    const cls = this.unique(name)
    const required = new Set<string>(schema.required ?? [])
    const lines = [`class ${cls}(Answer):`]
    const described = doc(schema.description)
    if (described !== "") lines.push(`    """${described}"""`)
    const properties = Object.entries(schema.properties as Record<string, Json>).filter(([key]) => isIdentifier(key))
    for (const [key, s] of properties) {
      const t = this.type(s, `${cls}${pascal(key)}`, "response")
      const type = required.has(key) ? t : t.startsWith("Optional[") ? t : `Optional[${t}]`
      lines.push("", "    @property", `    def ${key}(self) -> ${type}:`)
      const text = doc(this.resolve(s).description)
      if (text !== "") lines.push(`        """${text}"""`)
      lines.push(`        return ${this.wrap(type, `self.get(${JSON.stringify(key)})`)}`)
    }
    if (properties.length === 0) lines.push("    pass")
    this.blocks.push(lines.join("\n"))
    this.registered.push(cls)
    return cls
  }

  readonly registered: Array<string> = []

  /** The expression giving a field's value as its type says: nested answers wrapped in their classes. */
  wrap(type: string, value: string): string {
    const bare = type.replace(/^Optional\[(.*)\]$/, "$1")
    const inner = (t: string) => this.registered.includes(t)
    if (inner(bare)) return `_one(${bare}, ${value})`
    const list = /^List\[([A-Za-z0-9_]+)\]$/.exec(bare)
    if (list !== null && inner(list[1]!)) return `_many(${list[1]}, ${value})`
    const dict = /^Dict\[str, ([A-Za-z0-9_]+)\]$/.exec(bare)
    if (dict !== null && inner(dict[1]!)) return `_values(${dict[1]}, ${value})`
    return `${value}  # type: ignore[no-any-return]`
  }
}

/** The Python source of `_generated.py` for an OpenAPI document. */
export const generatePython = (document: Json): string => {
  const m = new Module(document)
  const methods: Array<string> = []
  for (const [path, operations] of Object.entries(document.paths as Record<string, Json>)) {
    for (const [verb, op] of Object.entries(operations)) {
      if (verb !== "get" && verb !== "post") continue
      const base = (op.operationId as string).replace(/^(get|post)/, "")
      const method = snake(base.replace(/[A-Z]/g, (c, i) => (i === 0 ? c.toLowerCase() : `_${c.toLowerCase()}`)))
      const ok = op.responses["200"]?.content?.["application/json"]?.schema as Json | undefined
      const response = ok === undefined ? "Answer" : m.type(ok, `${pascal(base)}Response`, "response")
      const summary = doc(op.summary)
      if (verb === "get") {
        methods.push([
          `    def ${method}(self, *, timeout: Optional[float] = None) -> ${response}:`,
          `        """${summary} (GET ${path})."""`,
          `        return ${response}(self._request("GET", ${JSON.stringify(path)}, None, timeout=timeout))`
        ].join("\n"))
        continue
      }
      const body = m.resolve(op.requestBody.content["application/json"].schema)
      const required = new Set<string>(body.required ?? [])
      const fields = Object.entries((body.properties ?? {}) as Record<string, Json>)
      for (const [key] of fields) {
        if (!isIdentifier(key) || (CLIENT_KEYWORDS as ReadonlyArray<string>).includes(key)) throw new Error(`${path}: field ${key} cannot be a keyword argument`)
      }
      const ordered = [...fields.filter(([k]) => required.has(k)), ...fields.filter(([k]) => !required.has(k))]
      const args = ordered.map(([key, s]) => {
        const t = m.type(s, `${pascal(base)}${pascal(key)}`, "request")
        return required.has(key) ? `${key}: ${t}` : `${key}: ${t.startsWith("Optional[") ? t : `Optional[${t}]`} = None`
      })
      const described = ordered.map(([key, s]) => `            ${key}: ${doc(m.resolve(s).description) || "see the API reference"}`)
      methods.push([
        `    def ${method}(`,
        `        self,`,
        `        *,`,
        ...args.map((a) => `        ${a},`),
        `        idempotency_key: Optional[str] = None,`,
        `        timeout: Optional[float] = None,`,
        `    ) -> ${response}:`,
        `        """${summary} (POST ${path}).`,
        ``,
        `        Args:`,
        ...described,
        `        """`,
        `        body = _body({${ordered.map(([k]) => `${JSON.stringify(k)}: ${k}`).join(", ")}})`,
        `        return ${response}(self._request("POST", ${JSON.stringify(path)}, body, idempotency_key=idempotency_key, timeout=timeout))._asked(self, ${JSON.stringify(path)}, body)`
      ].join("\n"))
    }
  }
  return [
    '"""Request and response types and one method per endpoint, generated from the service\'s OpenAPI',
    "document by scripts/python-client.ts (`npm run client:python`). Do not edit: a test fails when",
    'this file is not what the script makes of the current document."""',
    "",
    "from __future__ import annotations",
    "",
    "from typing import Any, Dict, List, Literal, Mapping, Optional, TypedDict, Union",
    "",
    "from ._answer import Answer, _many, _one, _values",
    "",
    "",
    "def _body(fields: Mapping[str, Any]) -> Dict[str, Any]:",
    '    """The JSON body: the fields given, without those left to their default (None)."""',
    "    return {k: v for k, v in fields.items() if v is not None}",
    "",
    "",
    m.blocks.join("\n\n\n"),
    "",
    "",
    "class Endpoints:",
    '    """One method per endpoint of the service (the client implements `_request`)."""',
    "",
    "    def _request(",
    "        self,",
    "        method: str,",
    "        path: str,",
    "        body: Optional[Dict[str, Any]],",
    "        *,",
    "        idempotency_key: Optional[str] = None,",
    "        timeout: Optional[float] = None,",
    "    ) -> Dict[str, Any]:",
    "        raise NotImplementedError",
    "",
    methods.join("\n\n"),
    "",
    "",
    `ANSWER_CLASSES = (${m.registered.join(", ")},)`,
    ""
  ].join("\n")
}

if (import.meta.main) {
  writeFileSync(GENERATED_PATH, generatePython(builtinDocument()))
  console.log(`wrote ${GENERATED_PATH}`)
}
