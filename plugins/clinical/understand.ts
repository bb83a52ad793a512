/**
 * Reading a clinical question: which drugs, conditions, axes, direction and duration it names,
 * matched against the dataset's vocabularies and the shipped lexicon (lexicon.json). Rules
 * (docs/analytics.md#clinical): case is ignored except for axis codes, which must be written in
 * capitals (`NM`, so the word "er" is not the ER axis); punctuation separates words; a plural
 * matches its singular; the longest phrase wins ("type 2 diabetes" before "diabetes"). A word
 * within two edits of a drug or condition name that matched nothing is reported as not
 * understood, with the name it resembles.
 */
import { AXES, type Axis, canonicalOrder, editDistanceWithin } from "../../src/plugin/Plugin.ts"
import lexicon from "./lexicon.json" with { type: "json" }
import { DIRECTIONS } from "./schema.ts"

export { DIRECTIONS } from "./schema.ts"

export type Direction = (typeof DIRECTIONS)[number]

/** One recognised mention: the words as written and what they mean. */
export interface Mention {
  readonly text: string
  readonly kind: "drug" | "condition" | "axis" | "direction"
  readonly code: string
}

/** What the query says. */
export interface Understanding {
  /** Codes in the order first mentioned, distinct. */
  readonly drugs: ReadonlyArray<string>
  readonly conditions: ReadonlyArray<string>
  /** Axes the text names, canonical order. */
  readonly axes: ReadonlyArray<Axis>
  readonly direction: Direction | undefined
  /** A duration in the text ("6 months", "90 days"), in days. */
  readonly durationDays: number | undefined
  readonly durationText: string | undefined
  readonly mentions: ReadonlyArray<Mention>
  /** Words that look like a drug or condition but match none, with the name they resemble. */
  readonly unknown: ReadonlyArray<{ readonly text: string; readonly closest: string }>
}

const DAYS_PER_UNIT: Readonly<Record<string, number>> = { day: 1, week: 7, month: 30.4375, year: 365.25 }
// No "a"/"an": "twice a day" is a dose, not a duration.
const NUMBER_WORDS: Readonly<Record<string, number>> = {
  one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10, eleven: 11, twelve: 12
}
const DURATION = new RegExp(`\\b(\\d{1,4}|${Object.keys(NUMBER_WORDS).join("|")})\\s+(day|week|month|year)s?\\b`)

/**
 * A word's singular key (`patients` → `patient`, `therapies` → `therapy`, `diseases` → `disease`).
 * Both the query and the known phrases go through it, so a word that only looks plural
 * (`diabetes` → `diabete`) still matches itself.
 */
export const singular = (word: string): string => {
  if (word.length <= 3 || word.endsWith("ss")) return word
  if (word.endsWith("ies")) return `${word.slice(0, -3)}y`
  return word.endsWith("s") ? word.slice(0, -1) : word
}

/** Lower-case words, punctuation as separators. */
const words = (text: string): Array<string> => text.toLowerCase().split(/[^a-z0-9]+/).filter((w) => w !== "")

/** A phrase's key: its words, singular, joined by spaces. */
const key = (phrase: string) => words(phrase).map(singular).join(" ")

/** The phrase table of a dataset's vocabularies (kept per vocabulary object by the caller). */
export const phraseTable = (vocabulary: { readonly drug: ReadonlyArray<string>; readonly condition: ReadonlyArray<string> }) => {
  const table = new Map<string, { readonly kind: Mention["kind"]; readonly code: string }>()
  const add = (phrase: string, kind: Mention["kind"], code: string) => {
    const k = key(phrase)
    if (k !== "" && !table.has(k)) table.set(k, { kind, code })
  }
  for (const d of vocabulary.drug) {
    add(d.replaceAll("_", " "), "drug", d)
    for (const b of (lexicon.brands as Record<string, ReadonlyArray<string>>)[d] ?? []) add(b, "drug", d)
  }
  for (const c of vocabulary.condition) {
    add(c.replaceAll("_", " "), "condition", c)
    for (const s of (lexicon.conditions as Record<string, ReadonlyArray<string>>)[c] ?? []) add(s, "condition", c)
  }
  for (const [axis, ws] of Object.entries(lexicon.axes)) for (const w of ws) add(w, "axis", axis)
  for (const [direction, ws] of Object.entries(lexicon.directions)) for (const w of ws) add(w, "direction", direction)
  const longest = Math.max(...[...table.keys()].map((k) => k.split(" ").length))
  // Single words a misspelling is compared with: drug and condition names and brands.
  const names = [...table].filter(([k, v]) => (v.kind === "drug" || v.kind === "condition") && !k.includes(" ") && k.length >= 5).map(([k]) => k)
  return { table, longest, names }
}

export type PhraseTable = ReturnType<typeof phraseTable>

/** Reads one query. */
export const understand = (query: string, phrases: PhraseTable): Understanding => {
  const mentions: Array<Mention> = []
  // Axis codes: capitals only, as whole words.
  for (const m of query.matchAll(/\b([A-Z]{2})\b/g)) {
    if ((AXES as ReadonlyArray<string>).includes(m[1]!)) mentions.push({ text: m[1]!, kind: "axis", code: m[1]! })
  }
  const raw = words(query)
  const sing = raw.map(singular)
  const unknown: Array<{ text: string; closest: string }> = []
  for (let i = 0; i < sing.length;) {
    let matched = 0
    for (let len = Math.min(phrases.longest, sing.length - i); len >= 1 && matched === 0; len--) {
      const hit = phrases.table.get(sing.slice(i, i + len).join(" "))
      if (hit !== undefined) {
        mentions.push({ text: raw.slice(i, i + len).join(" "), ...hit })
        matched = len
      }
    }
    if (matched === 0) {
      const w = sing[i]!
      if (w.length >= 5 && !/\d/.test(w)) {
        let best: { name: string; d: number } | undefined
        for (const name of phrases.names) {
          const d = editDistanceWithin(w, name, 2)
          if (d <= 2 && (best === undefined || d < best.d)) best = { name, d }
        }
        if (best !== undefined) unknown.push({ text: raw[i]!, closest: phrases.table.get(best.name)!.code })
      }
    }
    i += Math.max(matched, 1)
  }
  const codes = (kind: Mention["kind"]) => [...new Set(mentions.filter((m) => m.kind === kind).map((m) => m.code))]
  const directions = codes("direction") as Array<Direction>
  const duration = DURATION.exec(raw.join(" "))
  const amount = duration === null ? undefined : /^\d/.test(duration[1]!) ? Number(duration[1]) : NUMBER_WORDS[duration[1]!]!
  return {
    drugs: codes("drug"),
    conditions: codes("condition"),
    axes: canonicalOrder(codes("axis") as Array<Axis>),
    // The first direction stated is the one the question is about.
    direction: directions[0],
    durationDays: duration === null || amount === undefined || amount === 0 ? undefined : Math.round(amount * DAYS_PER_UNIT[duration[2]!]!),
    durationText: duration === null ? undefined : duration[0],
    mentions,
    unknown
  }
}

/** Whether anything the evidence can use was understood (a duration alone is not enough). */
export const understoodAnything = (u: Understanding): boolean =>
  u.drugs.length + u.conditions.length + u.axes.length > 0 || u.direction !== undefined
