/**
 * The coded concepts an import's facts name, each given a number once (by kind, mapped targets and
 * code, or text when it has no code), for the staged rows to refer to; the dataset's vocabulary is
 * made from them (StagedDataset.ts).
 */
import type { MapKind } from "../health/ConceptMaps.ts"
import type { Concept } from "./facts.ts"

/** The concepts of one import. */
export class StagedConcepts {
  private readonly ids = new Map<string, number>()
  /** Every concept, by its number. */
  readonly list: Array<{ readonly kind: MapKind; readonly concept: Concept }> = []
  /** Concepts only a source's derived tables (DRUG_ERA, CONDITION_ERA) name: compared, never a vocabulary entry. */
  readonly comparedOnly = new Set<number>()

  /** The number of a concept; `compared`: named by a source's derived table, which the import compares but never stores. */
  idOf(kind: MapKind, concept: Concept, compared = false): number {
    const key = `${kind}|${concept.targets.join(",")}|${concept.system ?? ""}|${concept.code ?? `text:${concept.display.toLowerCase()}`}`
    let id = this.ids.get(key)
    if (id === undefined) {
      id = this.list.length
      this.list.push({ kind, concept })
      this.ids.set(key, id)
      if (compared) this.comparedOnly.add(id)
    } else if (!compared) this.comparedOnly.delete(id)
    return id
  }
}
