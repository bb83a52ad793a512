/**
 * A plugin's failure, fit for the log: its error's name, its message with every request value
 * taken out, and the stack frames (file and line, never values). A plugin's exception text often
 * quotes what it was given ("cannot score patient 4711"); the log must not carry it
 * (docs/api.md, "Logs and traces").
 */

/** What replaces a request value (or any number) in a logged message. */
export const REDACTED = "«redacted»"

/** Every leaf value of a parsed JSON body, as text (strings and numbers; booleans and null say nothing). */
export const leafValues = (json: unknown): Array<string> => {
  const out: Array<string> = []
  const walk = (v: unknown): void => {
    if (typeof v === "string") {
      if (v.length > 0) out.push(v)
    } else if (typeof v === "number") out.push(String(v))
    else if (Array.isArray(v)) v.forEach(walk)
    else if (typeof v === "object" && v !== null) {
      // Keys are the endpoint's field names (the schema's words), not the caller's values.
      for (const x of Object.values(v)) walk(x)
    }
  }
  walk(json)
  return out
}

/**
 * The message with each of `values` (longest first) and then every number replaced by
 * {@link REDACTED}: numbers are what a plugin derives from its input (a patient's score, a count).
 */
export const redactMessage = (message: string, values: ReadonlyArray<string>): string => {
  let out = message
  for (const v of [...new Set(values)].sort((a, b) => b.length - a.length)) {
    if (v.length === 0) continue
    out = out.split(v).join(REDACTED)
  }
  return out.replace(/[-+]?\d+(\.\d+)?([eE][-+]?\d+)?/g, REDACTED).slice(0, 500)
}

/** A defect, redacted: name, message without request values, stack frames. */
export const redactedFailure = (defect: unknown, values: ReadonlyArray<string>) => {
  const error = defect instanceof Error ? defect : undefined
  const frames = (error?.stack ?? "").split("\n").filter((l) => /^\s+at /.test(l)).slice(0, 12).map((l) => l.trim())
  return {
    error: error?.name ?? typeof defect,
    message: redactMessage(error?.message ?? String(defect), values),
    frames
  }
}
