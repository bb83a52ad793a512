/**
 * "Did you mean": the known names closest to an unknown one, for the `suggestions` of a 422
 * `unknown_<kind>` problem. Distance: optimal-string-alignment edit distance (insertions, deletions,
 * substitutions, adjacent transpositions) between the lower-cased names with spaces and hyphens read
 * as underscores; a known name that contains the input (`diabetes` → `type_2_diabetes`) ranks as
 * distance 1. Ties go to the smaller plain edit distance, then to the vocabulary's order.
 */

/** Edit distance with adjacent transpositions (optimal string alignment). */
export const editDistance = (a: string, b: string): number => {
  const rows = a.length + 1
  const cols = b.length + 1
  const d = new Array<number>(rows * cols)
  for (let i = 0; i < rows; i++) d[i * cols] = i
  for (let j = 0; j < cols; j++) d[j] = j
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let v = Math.min(d[(i - 1) * cols + j]! + 1, d[i * cols + j - 1]! + 1, d[(i - 1) * cols + j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[(i - 2) * cols + j - 2]! + 1)
      d[i * cols + j] = v
    }
  }
  return d[rows * cols - 1]!
}

const normalise = (s: string) => s.trim().toLowerCase().replace(/[\s-]+/g, "_")

/** Up to `limit` known names nearest to `input`, nearest first (ties in the order given). */
export const closest = (input: string, known: ReadonlyArray<string>, limit = 3): Array<string> => {
  const x = normalise(input)
  return known
    .map((name, order) => {
      const y = normalise(name)
      const edits = editDistance(x, y)
      const distance = x.length > 0 && y.includes(x) ? Math.min(1, edits) : edits
      return { name, order, distance, edits }
    })
    .sort((p, q) => p.distance - q.distance || p.edits - q.edits || p.order - q.order)
    .slice(0, limit)
    .map((c) => c.name)
}
