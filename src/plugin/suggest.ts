/**
 * "Did you mean": the known names closest to an unknown one, for the `suggestions` of a 422
 * `unknown_<kind>` problem and for unknown fields. Names are compared lower-cased with spaces and
 * hyphens read as underscores, by optimal-string-alignment edit distance (insertions, deletions,
 * substitutions, adjacent transpositions), both whole and word by word: each word of the input is
 * matched to the nearest word of the name, so `diabetis` finds `type_2_diabetes` and `kidney
 * disease` finds `chronic_kidney_disease`. A name that contains the input ranks as distance 1.
 * Ties go to the smaller whole-name distance, then to the vocabulary's order.
 */

/** Three rows of the distance table, reused: a row is one more than the longer string. */
let rowsScratch = new Int32Array(3 * 64)

/**
 * Edit distance with adjacent transpositions (optimal string alignment) up to `limit`: any distance
 * above it is returned as `limit + 1`, found sooner — strings whose lengths differ by more are not
 * compared, and the rows stop once every cell of the last two exceeds it (no later cell can be
 * smaller: each is a cell of one of them plus 0 or more). By rows: only the row before and the one
 * before that are needed (Wagner–Fischer with Damerau's transposition step).
 */
export const editDistanceWithin = (a: string, b: string, limit: number): number => {
  const n = b.length
  if (Math.abs(a.length - n) > limit) return limit + 1
  if (a.length === 0) return n
  if (n === 0) return a.length
  if (rowsScratch.length < 3 * (n + 1)) rowsScratch = new Int32Array(3 * (n + 1) * 2)
  const width = n + 1
  // Rows i−2, i−1 and i live at offsets rotating through 0, width, 2·width.
  let before = 0
  let previous = width
  let current = 2 * width
  const d = rowsScratch
  for (let j = 0; j <= n; j++) d[previous + j] = j
  let previousLow = 0
  for (let i = 1; i <= a.length; i++) {
    const ai = a.charCodeAt(i - 1)
    const aBefore = i > 1 ? a.charCodeAt(i - 2) : -1
    d[current] = i
    let rowLow = i
    for (let j = 1; j <= n; j++) {
      const bj = b.charCodeAt(j - 1)
      let v = Math.min(d[previous + j]! + 1, d[current + j - 1]! + 1, d[previous + j - 1]! + (ai === bj ? 0 : 1))
      if (i > 1 && j > 1 && ai === b.charCodeAt(j - 2) && aBefore === bj) v = Math.min(v, d[before + j - 2]! + 1)
      d[current + j] = v
      if (v < rowLow) rowLow = v
    }
    if (rowLow > limit && previousLow > limit) return limit + 1
    previousLow = rowLow
    const oldest = before
    before = previous
    previous = current
    current = oldest
  }
  return d[previous + n]!
}

/** Edit distance with adjacent transpositions (optimal string alignment). */
export const editDistance = (a: string, b: string): number => editDistanceWithin(a, b, Number.POSITIVE_INFINITY)

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
