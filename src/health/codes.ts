/**
 * How a request names a vocabulary entry: by the service's code (`type_2_diabetes`) or by a
 * standard code in `system:code` notation (`snomed:44054006`, `icd10cm:E11.9`, `rxnorm:6809`).
 * A standard code resolves to the entry that carries it in the loaded dataset's vocabulary, else to
 * the entry the shipped concept maps take it to (ICD-10 categories included), when the dataset has
 * that entry.
 */
import { formatStandard, parseStandard } from "../plugin/codeSystems.ts"
import { CONCEPT_MAPS, lookup, type MapKind } from "./ConceptMaps.ts"
import type { Dataset } from "./HealthData.ts"
import type { VocabularyKind } from "./vocabulary.ts"

/** What resolution reads of a dataset. */
type Vocabularies = Pick<Dataset, "vocabulary" | "vocabularyDetails">

/** Per dataset and kind: entry by its standard code (`system:CODE`, code upper-cased). */
const byStandard = new WeakMap<object, Map<VocabularyKind, ReadonlyMap<string, string>>>()

const standardIndex = (data: Vocabularies, kind: VocabularyKind): ReadonlyMap<string, string> => {
  let perKind = byStandard.get(data)
  if (perKind === undefined) byStandard.set(data, perKind = new Map())
  let index = perKind.get(kind)
  if (index === undefined) {
    const map = new Map<string, string>()
    const codes = data.vocabulary[kind]
    data.vocabularyDetails[kind].forEach((d, i) => {
      const s = d.standard === null ? undefined : parseStandard(d.standard)
      if (s !== undefined) map.set(formatStandard({ system: s.system, code: s.code.toUpperCase() }), codes[i]!)
    })
    perKind.set(kind, index = map)
  }
  return index
}

/**
 * The dataset's code for what a request wrote: the code itself when the dataset has it, the entry
 * a standard code resolves to, or undefined (unknown: the caller answers 422 with suggestions).
 */
export const resolveCode = (data: Vocabularies, kind: VocabularyKind, text: string): string | undefined => {
  const codes = data.vocabulary[kind]
  if (codes.includes(text)) return text
  const standard = parseStandard(text)
  if (standard === undefined) return undefined
  const own = standardIndex(data, kind).get(formatStandard({ system: standard.system, code: standard.code.toUpperCase() }))
  if (own !== undefined) return own
  if (!(kind in CONCEPT_MAPS)) return undefined
  for (const entry of lookup(kind as MapKind, standard)) if (codes.includes(entry.target)) return entry.target
  return undefined
}
