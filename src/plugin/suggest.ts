/**
 * "Did you mean": the known names closest to an unknown one, for the `suggestions` of a 422
 * `unknown_<kind>` problem and for unknown fields. Names are compared lower-cased with spaces and
 * hyphens read as underscores, by optimal-string-alignment edit distance (insertions, deletions,
 * substitutions, adjacent transpositions), both whole and word by word: each word of the input is
 * matched to the nearest word of the name, so `diabetis` finds `type_2_diabetes` and `kidney
 * disease` finds `chronic_kidney_disease`. A name that contains the input ranks as distance 1.
 * Ties go to the smaller whole-name distance, then to the vocabulary's order.
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
const wordsOf = (s: string) => s.split("_").filter((w) => w.length > 0)

/**
 * How far `input` is from `name` (both normalised): the smaller of the whole-name distance and the
 * word distance (every input word matched to its nearest word of the name, summed); a name that
 * contains the input is at most 1 away.
 */
export const nameDistance = (input: string, name: string): number => {
  const x = normalise(input)
  const y = normalise(name)
  const whole = editDistance(x, y)
  const yWords = wordsOf(y)
  const xWords = wordsOf(x)
  const byWords = xWords.length === 0 || yWords.length < 2
    ? whole
    : xWords.reduce((sum, w) => sum + Math.min(...yWords.map((v) => editDistance(w, v))), 0) + (xWords.length < yWords.length ? 0.5 : 0)
  const contains = x.length > 0 && y.includes(x) ? 1 : Number.POSITIVE_INFINITY
  return Math.min(whole, byWords, contains)
}

/** Up to `limit` known names nearest to `input`, nearest first (ties in the order given). */
export const closest = (input: string, known: ReadonlyArray<string>, limit = 3): Array<string> =>
  known
    .map((name, order) => ({ name, order, distance: nameDistance(input, name), edits: editDistance(normalise(input), normalise(name)) }))
    .sort((p, q) => p.distance - q.distance || p.edits - q.edits || p.order - q.order)
    .slice(0, limit)
    .map((c) => c.name)

/** The one known name a misspelt field most likely meant: within 2 edits (or a third of its length), else none. */
export const likelyMeant = (input: string, known: ReadonlyArray<string>): string | undefined => {
  const [best] = closest(input, known, 1)
  if (best === undefined) return undefined
  return nameDistance(input, best) <= Math.max(2, Math.floor(input.length / 3)) ? best : undefined
}
