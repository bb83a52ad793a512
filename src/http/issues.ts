/**
 * Turns a Schema issue tree into the `errors` list of a 400 problem: one entry per located problem,
 * its path as an RFC 6901 JSON pointer into the request body, and whether it is an unknown field.
 */
import { SchemaIssue } from "effect"
import type { FieldIssue } from "./Problems.ts"

const UNKNOWN_MARK = "\u0000unknown_field"

/** Formats leaves; marks excess keys so they can be told apart from other problems. */
const formatter = SchemaIssue.makeFormatterStandardSchemaV1({
  leafHook: (issue) => issue._tag === "UnexpectedKey" ? UNKNOWN_MARK : SchemaIssue.defaultLeafHook(issue)
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
    const path = jsonPointer((i.path ?? []).map((s) => (typeof s === "object" && s !== null && "key" in s ? s.key : s)))
    if (i.message === UNKNOWN_MARK) return { path, message: "Unknown field: this endpoint does not define it" }
    onlyUnknown = false
    return { path, message: i.message }
  })
  return { issues, onlyUnknown }
}
