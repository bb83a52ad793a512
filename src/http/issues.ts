/**
 * Turns a Schema issue tree into the `errors` list of a 400 problem: one entry per located problem,
 * its path as an RFC 6901 JSON pointer into the request body, and whether it is an unknown field.
 * An unknown field names the field it most likely meant (`predict_ahed` → `predict_ahead`).
 */
import * as SchemaIssue from "effect/SchemaIssue"
import { likelyMeant } from "../plugin/suggest.ts"
import type { FieldIssue } from "./Problems.ts"

const UNKNOWN_MARK = "\u0000unknown_field"

/** The property names of the object schema an unexpected key was found in (none for other shapes). */
const knownKeys = (issue: SchemaIssue.UnexpectedKey): ReadonlyArray<string> => {
  const ast = issue.ast as { readonly propertySignatures?: ReadonlyArray<{ readonly name: PropertyKey }> }
  return (ast.propertySignatures ?? []).map((p) => String(p.name))
}

/** Formats leaves; marks excess keys (with the keys that were allowed) so they can be told apart from other problems. */
const formatter = SchemaIssue.makeFormatterStandardSchemaV1({
  leafHook: (issue) => issue._tag === "UnexpectedKey" ? UNKNOWN_MARK + JSON.stringify(knownKeys(issue)) : SchemaIssue.defaultLeafHook(issue)
})

/** RFC 6901: `~` → `~0`, `/` → `~1`. */
const escapeSegment = (segment: PropertyKey): string => String(segment).replaceAll("~", "~0").replaceAll("/", "~1")

/** JSON pointer of a path (the root is the empty string). */
export const jsonPointer = (path: ReadonlyArray<PropertyKey>): string => path.map((s) => "/" + escapeSegment(s)).join("")

/** The located issues, and whether every one is an unknown field. */
export const fieldIssues = (issue: SchemaIssue.Issue): { readonly issues: ReadonlyArray<FieldIssue>; readonly onlyUnknown: boolean } => {
  const raw = formatter(issue).issues
  let onlyUnknown = raw.length > 0
  const issues = raw.map((i) => {
    const segments = (i.path ?? []).map((s) => (typeof s === "object" && s !== null && "key" in s ? s.key : s))
    const path = jsonPointer(segments)
    if (i.message.startsWith(UNKNOWN_MARK)) {
      const known = JSON.parse(i.message.slice(UNKNOWN_MARK.length)) as Array<string>
      const meant = likelyMeant(String(segments[segments.length - 1] ?? ""), known)
      return { path, message: `Unknown field: this endpoint does not define it${meant === undefined ? "" : `; did you mean '${meant}'?`}` }
    }
    onlyUnknown = false
    return { path, message: i.message }
  })
  return { issues, onlyUnknown }
}
