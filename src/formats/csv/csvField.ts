/**
 * CSV as RFC 4180 writes it, for the exports: one field — empty for null, a number as JavaScript
 * prints it (the shortest text that reads back to the same double), text as it is unless it holds
 * a comma, a double quote or a line break, then in double quotes with its quotes doubled — and
 * records of fields ended by LF (which RFC 4180 readers, csv-parse and DuckDB among them, accept
 * beside CRLF).
 */

/** A field that must be quoted. */
const SPECIAL = /[",\n\r]/

/** One field. */
export const csvField = (value: unknown): string => {
  if (value === null || value === undefined) return ""
  const text = String(value)
  return typeof value === "string" && SPECIAL.test(text) ? `"${text.replaceAll('"', '""')}"` : text
}

/** Records, each ended by LF: one string for one write. */
export const csvRecords = (rows: ReadonlyArray<ReadonlyArray<unknown>>): string => {
  let out = ""
  for (const row of rows) {
    for (let i = 0; i < row.length; i++) out += i === 0 ? csvField(row[i]) : "," + csvField(row[i])
    out += "\n"
  }
  return out
}
