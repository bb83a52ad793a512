/** The sub-schemas a JSON pointer reaches in a schema's JSON Schema (the plugin checks of disclosure and views). */
import * as Schema from "effect/Schema"

/** A JSON Schema object. */
export type JsonSchema = Readonly<Record<string, unknown>>

/** A JSON Schema and the definitions its `$ref`s name. */
export interface JsonSchemaDocument {
  readonly schema: JsonSchema
  readonly definitions: Readonly<Record<string, JsonSchema>>
}

/** The JSON Schema document of an Effect schema. */
export const jsonSchemaDocument = (schema: Schema.Top): JsonSchemaDocument => Schema.toJsonSchemaDocument(schema) as unknown as JsonSchemaDocument

/** A schema through its `$ref`, and each branch of its `anyOf` beside it. */
export const resolveSchema = (doc: JsonSchemaDocument, s: JsonSchema): Array<JsonSchema> => {
  const ref = s["$ref"]
  if (typeof ref === "string") {
    const target = doc.definitions[decodeURIComponent(ref.split("/").at(-1)!)]
    return target === undefined ? [] : resolveSchema(doc, target)
  }
  const anyOf = s["anyOf"]
  return Array.isArray(anyOf) ? [s, ...(anyOf as Array<JsonSchema>).flatMap((branch) => resolveSchema(doc, branch))] : [s]
}

/**
 * The sub-schemas a JSON pointer pattern reaches (through $ref, anyOf, properties,
 * additionalProperties, items; `*` any member). `""` is the whole schema.
 */
export const schemasAt = (doc: JsonSchemaDocument, pattern: string): Array<JsonSchema> => {
  const resolve = (s: JsonSchema) => resolveSchema(doc, s)
  let here = resolve(doc.schema)
  if (pattern === "") return here
  for (const segment of pattern.slice(1).split("/")) {
    here = here.flatMap((s) => {
      const properties = (s["properties"] ?? {}) as Readonly<Record<string, JsonSchema>>
      const next: Array<JsonSchema> = []
      if (segment === "*") next.push(...Object.values(properties))
      else if (properties[segment] !== undefined) next.push(properties[segment])
      if (typeof s["additionalProperties"] === "object") next.push(s["additionalProperties"] as JsonSchema)
      if (typeof s["items"] === "object" && (segment === "*" || /^\d+$/.test(segment))) next.push(s["items"] as JsonSchema)
      return next.flatMap(resolve)
    })
  }
  return here
}

