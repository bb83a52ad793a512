/**
 * An OMOP dataset's vocabulary tables, kept in a scratch SQLite file while the import runs:
 * CONCEPT (id → vocabulary, code, name), CONCEPT_RELATIONSHIP's "Maps to" rows (a source concept →
 * its standard concepts) and CONCEPT_ANCESTOR's rows that lead to an RxNorm ingredient (a drug →
 * its ingredients), to one of the Visit vocabulary's top visit concepts (an office visit → an
 * outpatient visit) or to a SNOMED concept the condition map takes (type 2 diabetes with a
 * complication → type 2 diabetes). Look-ups are cached: a dataset uses a few thousand concepts of the millions a
 * full Athena download holds.
 */
import { DatabaseSync, type StatementSync } from "node:sqlite"
import { rmSync } from "node:fs"
import { SNAKE_CASE, systemOfOmopVocabulary } from "../../plugin/codeSystems.ts"
import { CONCEPT_MAPS, type ConceptEntry } from "../../health/ConceptMaps.ts"
import { VOCABULARY_KINDS } from "../../health/vocabulary.ts"
import { ownSystem, type SourceCoding } from "../../pipeline/concepts.ts"
import { hccVocabularyOf } from "./ownTerms.ts"

const OWN_KINDS = new Map(VOCABULARY_KINDS.map((k) => [hccVocabularyOf(k).toLowerCase(), k]))

/**
 * The Visit vocabulary's top visit concepts, the most acute first: an admission through the
 * emergency room (262) descends from both Inpatient (9201) and Emergency Room (9203) and is one.
 */
const TOP_VISITS: ReadonlyArray<number> = [9201, 262, 9203, 9202]

/** The SNOMED codes the condition map takes exactly: a condition concept descending from one is that condition too. */
const MAPPED_SNOMED_CONDITIONS: ReadonlyArray<string> = [...new Set(
  (CONCEPT_MAPS.condition.entries as ReadonlyArray<ConceptEntry>).filter((e) => e.system === "snomed" && e.match === undefined).map((e) => e.code)
)]

/** One of the service's own entries a CONCEPT table holds: its kind, code, label and the standard code it maps to. */
export interface OwnEntry {
  readonly kind: string
  readonly code: string
  readonly label: string
  readonly system: string | null
  readonly standard: string | null
}

/** A coding of a concept row: the service's own system for its own vocabularies, else the vocabulary's short name. */
const codingOf = (r: { readonly vocabulary: string; readonly code: string; readonly name: string }): SourceCoding => {
  const kind = OWN_KINDS.get(r.vocabulary.toLowerCase())
  return { system: kind === undefined ? systemOfOmopVocabulary(r.vocabulary) ?? r.vocabulary : ownSystem(kind), code: r.code, display: r.name }
}

/** One concept's codings: itself (and what it maps to), and its OMOP id. */
export interface ConceptCodings {
  readonly codings: ReadonlyArray<SourceCoding>
  /** The concept's name, or undefined when CONCEPT does not hold it. */
  readonly name: string | undefined
  readonly vocabulary: string | undefined
  readonly code: string | undefined
}

/** The service's own entries in a vocabulary store (vocabularies `HCC <kind>`), with the standard code each maps to. */
const ownEntriesIn = (db: DatabaseSync): ReadonlyArray<OwnEntry> => {
  const out: Array<OwnEntry> = []
  const rows = db.prepare(`SELECT c.vocabulary, c.code, c.name, t.vocabulary AS target_vocabulary, t.code AS target_code FROM concept c
    LEFT JOIN maps_to m ON m.source = c.id LEFT JOIN concept t ON t.id = m.target
    WHERE c.vocabulary LIKE 'HCC %' ORDER BY c.id, m.target`).all() as Array<Record<string, string | null>>
  const seen = new Set<string>()
  for (const r of rows) {
    const kind = OWN_KINDS.get(String(r.vocabulary).toLowerCase())
    const code = String(r.code)
    if (kind === undefined || !SNAKE_CASE.regex.test(code) || seen.has(`${kind}|${code}`)) continue
    seen.add(`${kind}|${code}`)
    const system = r.target_vocabulary === null ? undefined : systemOfOmopVocabulary(r.target_vocabulary!)
    out.push({ kind, code, label: String(r.name), system: system ?? null, standard: system === undefined ? null : r.target_code ?? null })
  }
  return out
}

/** The store's tables: CONCEPT's columns the import reads, "Maps to" pairs, and the ancestors kept. */
const SCHEMA = `PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;
  CREATE TABLE concept (id INTEGER PRIMARY KEY, vocabulary TEXT, code TEXT, name TEXT, class TEXT);
  CREATE TABLE maps_to (source INTEGER, target INTEGER);
  CREATE TABLE ancestor (descendant INTEGER, ancestor INTEGER);
  BEGIN`

/** Ends the loads: only the ancestors the look-ups use are kept (ingredients, top visits, mapped SNOMED conditions), and indexes. */
const CLOSE = `COMMIT;
  CREATE INDEX maps_to_source ON maps_to (source);
  DELETE FROM ancestor WHERE ancestor NOT IN (SELECT id FROM concept WHERE class = 'Ingredient') AND ancestor NOT IN (${TOP_VISITS.join(", ")})
    AND ancestor NOT IN (SELECT id FROM concept WHERE vocabulary = 'SNOMED' AND code IN (${MAPPED_SNOMED_CONDITIONS.map((c) => `'${c}'`).join(", ")}));
  CREATE INDEX ancestor_descendant ON ancestor (descendant)`

/** A CONCEPT row as the store keeps it. */
interface ConceptRow {
  readonly vocabulary: string
  readonly code: string
  readonly name: string
  readonly class: string
}

/** Closes a scratch store and deletes its files. */
const removeStore = (db: DatabaseSync, path: string) => {
  if (db.isOpen) db.close()
  for (const suffix of ["", "-journal", "-wal", "-shm"]) rmSync(path + suffix, { force: true })
}

/** The value kept for `id` in `cache`, made by `make` the first time. */
const cachedIn = <A>(cache: Map<number, A>, id: number, make: () => A): A => {
  let hit = cache.get(id)
  if (hit === undefined) cache.set(id, hit = make())
  return hit
}

/** The scratch store of the vocabulary tables. */
export class OmopVocabulary {
  private readonly db: DatabaseSync
  private readonly path: string
  private readonly cache = new Map<number, ConceptCodings>()
  private readonly ingredientCache = new Map<number, ReadonlyArray<number>>()
  private readonly visitCache = new Map<number, ReadonlyArray<number>>()
  private ancestors: StatementSync | undefined
  private snomedAncestors: StatementSync | undefined
  private readonly conditionCache = new Map<number, ReadonlyArray<number>>()
  private concept: StatementSync | undefined
  private mapsTo: StatementSync | undefined
  private ingredients: StatementSync | undefined
  private pending = 0
  private readonly inserts = new Map<string, StatementSync>()

  constructor(path: string) {
    this.path = path
    rmSync(path, { force: true })
    this.db = new DatabaseSync(path)
    this.db.exec(SCHEMA)
  }

  private insert(table: string, values: ReadonlyArray<string | number>): void {
    let st = this.inserts.get(table)
    if (st === undefined) this.inserts.set(table, st = this.db.prepare(`INSERT OR IGNORE INTO ${table} VALUES (${values.map(() => "?").join(", ")})`))
    st.run(...values)
    if (++this.pending >= 50_000) {
      this.db.exec("COMMIT; BEGIN")
      this.pending = 0
    }
  }

  /** One CONCEPT row. */
  addConcept(id: number, vocabulary: string, code: string, name: string, conceptClass: string): void {
    this.insert("concept", [id, vocabulary, code, name, conceptClass])
  }

  /** One CONCEPT_RELATIONSHIP row of relationship "Maps to". */
  addMapsTo(source: number, target: number): void {
    if (source !== target) this.insert("maps_to", [source, target])
  }

  /** One CONCEPT_ANCESTOR row; kept when the ancestor is an ingredient, a top visit concept or a mapped SNOMED condition (checked at the end). */
  addAncestor(descendant: number, ancestor: number): void {
    if (descendant !== ancestor) this.insert("ancestor", [descendant, ancestor])
  }

  /** Ends the loads: indexes for the look-ups. */
  close(): void {
    this.db.exec(CLOSE)
  }

  /** Whether CONCEPT was given (without it, concepts are known by id and source value only). */
  get hasConcepts(): boolean {
    return (this.db.prepare("SELECT COUNT(*) AS n FROM concept").get() as { readonly n: number }).n > 0
  }

  private row(id: number): ConceptRow | undefined {
    return (this.concept ??= this.db.prepare("SELECT vocabulary, code, name, class FROM concept WHERE id = ?")).get(id) as ConceptRow | undefined
  }

  /** A concept's codings: itself, the standard concepts it maps to, its OMOP id. */
  codingsOf(id: number): ConceptCodings {
    return cachedIn(this.cache, id, () => {
      const codings: Array<SourceCoding> = []
      const self = this.row(id)
      if (self !== undefined) codings.push(codingOf(self))
      this.mapsTo ??= this.db.prepare("SELECT target FROM maps_to WHERE source = ?")
      for (const { target } of this.mapsTo.all(id) as Array<{ readonly target: number }>) {
        const t = this.row(target)
        if (t !== undefined) codings.push(codingOf(t))
      }
      codings.push({ system: "omop", code: String(id), ...(self === undefined ? {} : { display: self.name }) })
      return { codings, name: self?.name, vocabulary: self?.vocabulary, code: self?.code }
    })
  }

  /** The ingredient concepts of a drug concept (itself when it is one; none when CONCEPT_ANCESTOR does not say). */
  ingredientsOf(id: number): ReadonlyArray<number> {
    return cachedIn(this.ingredientCache, id, () => {
      if (this.row(id)?.class === "Ingredient") return [id]
      this.ingredients ??= this.db.prepare("SELECT ancestor FROM ancestor WHERE descendant = ? ORDER BY ancestor")
      return (this.ingredients.all(id) as Array<{ readonly ancestor: number }>).map((r) => r.ancestor)
    })
  }

  /**
   * The SNOMED concepts of the condition map a condition concept descends from by CONCEPT_ANCESTOR
   * (the concept itself not included); none when the table does not say.
   */
  mappedConditionAncestorsOf(id: number): ReadonlyArray<number> {
    return cachedIn(this.conditionCache, id, () => {
      this.snomedAncestors ??= this.db.prepare("SELECT a.ancestor FROM ancestor a JOIN concept c ON c.id = a.ancestor WHERE a.descendant = ? AND c.vocabulary = 'SNOMED' ORDER BY a.ancestor")
      return (this.snomedAncestors.all(id) as Array<{ readonly ancestor: number }>).map((r) => r.ancestor)
    })
  }

  /**
   * The top visit concepts (Inpatient 9201, Emergency Room and Inpatient 262, Emergency Room 9203,
   * Outpatient 9202) a visit concept descends from by CONCEPT_ANCESTOR, in that order; none when
   * the table does not say.
   */
  topVisitsOf(id: number): ReadonlyArray<number> {
    return cachedIn(this.visitCache, id, () => {
      this.ancestors ??= this.db.prepare("SELECT ancestor FROM ancestor WHERE descendant = ?")
      const found = new Set((this.ancestors.all(id) as Array<{ readonly ancestor: number }>).map((r) => r.ancestor))
      return TOP_VISITS.filter((v) => found.has(v))
    })
  }

  /** The service's own entries (vocabularies `HCC <kind>`), with the standard code each maps to. */
  ownEntries(): ReadonlyArray<OwnEntry> {
    return ownEntriesIn(this.db)
  }

  /** Deletes the scratch file. */
  dispose(): void {
    removeStore(this.db, this.path)
  }
}
