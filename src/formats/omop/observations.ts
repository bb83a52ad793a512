/**
 * MEASUREMENT and OBSERVATION rows → axis scores (instruments of the axis model; direct scores:
 * concepts of the vocabulary `HCC axis`, concept_code the axis), adverse reactions (OBSERVATION)
 * and the service's own facts (an export of ours: a course's adherence and that it is ongoing, a
 * device outcome, linked to their rows by `*_event_id`).
 *
 * What a row gives depends only on its concepts and its value, so a table of hundreds of millions
 * of rows is read in bulk (readInBulk): DuckDB groups the rows by concept pair, then the scored
 * rows by value, JavaScript maps each distinct pair and value once, and DuckDB sums the scores per
 * person and month. Rows of adverse reactions and of the service's own facts are few and mapped one
 * by one. Whenever a row has a problem the bulk read gives up and the table is read again row by
 * row (mapRow, the same rules), so that each problem is reported as `file:line: column: reason`.
 */
import * as Effect from "effect/Effect"
import { AXES, type Axis } from "../../plugin/axes.ts"
import { monthOfDay } from "../../health/calendar.ts"
import { agesKey, agesOfKey, type CompiledAxisModel, type Instrument, unscoredNote } from "../../pipeline/AxisModel.ts"
import { conceptOf } from "../../pipeline/concepts.ts"
import { type Engine, literal } from "../../pipeline/Engine.ts"
import type { Concept, Fact, Problem } from "../../pipeline/facts.ts"
import type { Report } from "../../pipeline/Report.ts"
import type { Staging } from "../../pipeline/Staging.ts"
import type { Origin } from "../../pipeline/stagingTables.ts"
import { FIELD_CONCEPT } from "./cdm54.ts"
import { DAY_SQL, dayOf, idOf, isProblem, type RowResult } from "./cells.ts"
import type { OmopVocabulary } from "./OmopVocabulary.ts"
import { readingFile } from "./fileProblem.ts"
import { HCC_AXIS_VOCABULARY, HCC_FACT_VOCABULARY, hccVocabularyOf } from "./ownTerms.ts"
import type { OmopFile, OmopRow } from "./tables.ts"
import { col, relationOf } from "./vocabularyTables.ts"

/**
 * OBSERVATION concepts that record an adverse reaction to a drug (SNOMED CT): 62014003 Adverse
 * reaction to drug, 416098002 Allergy to drug, 59037007 Drug intolerance (and their concept ids
 * wherever CONCEPT gives them). The drug is value_as_concept_id; the reaction qualifier_concept_id,
 * else the observation concept itself.
 */
export const ADVERSE_REACTION_CODES: ReadonlySet<string> = new Set(["62014003", "416098002", "59037007"])

type Table = "measurement" | "observation"

/** What a row's concept (and source concept) make it. */
type RowKind =
  | { readonly k: "adverse"; readonly name: string | undefined }
  | { readonly k: "own"; readonly vocabulary: string; readonly code: string }
  | { readonly k: "scored"; readonly direct: Axis | undefined; readonly instruments: ReadonlyArray<Instrument> }
  | { readonly k: "unused" }

/** Per axis (AXES order) the sum and number of 0–10 scores, for the ages of `ages` (AxisModel.ts agesKey; "" every age). */
interface ScoreGroup {
  readonly ages: string
  readonly sums: Array<number>
  readonly counts: Array<number>
}

/** A scored value: its scores, kept apart by the ages they apply to, and why any instrument left it out. */
interface Scored {
  readonly direct: boolean
  readonly groups: ReadonlyArray<ScoreGroup>
  readonly notes: ReadonlyArray<string>
}

/** The service's own facts: a course's adherence or that it is ongoing; a device outcome. */
const ownFact = (t: Table, r: OmopRow, kind: Extract<RowKind, { k: "own" }>): RowResult => {
  const linked = (field: number) => r.get(t === "observation" ? "obs_event_field_concept_id" : "meas_event_field_concept_id") === String(field) ? r.get(`${t}_event_id`) : ""
  const text = r.get("value_as_number")
  const value = text === "" || !Number.isFinite(Number(text)) ? { path: "value_as_number", reason: `'${text}' is not a number` } : Number(text)
  if (kind.vocabulary === HCC_FACT_VOCABULARY) {
    const course = linked(FIELD_CONCEPT.drug_exposure_id)
    if (course === "") return `OBSERVATION '${kind.code}' not linked to a DRUG_EXPOSURE row (observation_event_id): left out`
    if (kind.code === "ongoing") return [{ k: "course_detail", course: `drug_exposure/${course}`, adherence: null, ongoing: true }]
    if (isProblem(value)) return value
    if (value < 0 || value > 1) return { path: "value_as_number", reason: `an adherence must be in [0, 1], got ${value}` }
    return [{ k: "course_detail", course: `drug_exposure/${course}`, adherence: value, ongoing: false }]
  }
  const implant = linked(FIELD_CONCEPT.procedure_occurrence_id)
  if (implant === "") return "MEASUREMENT of a device metric not linked to a PROCEDURE_OCCURRENCE row (measurement_event_id): left out"
  return isProblem(value) ? value : [{ k: "outcome", implant, metric: kind.code, value }]
}

/** An adverse reaction: the drug its value, the reaction its qualifier (else the concept's name). */
const adverseOf = (vocabulary: OmopVocabulary, drugOf: (id: string) => Concept, r: OmopRow, person: string, name: string | undefined): RowResult => {
  const day = dayOf(r.get("observation_date"), "observation_date")
  if (day === undefined) return { path: "observation_date", reason: "is required" }
  if (isProblem(day)) return day
  const drugId = r.get("value_as_concept_id")
  if (drugId === "" || drugId === "0") return "adverse reaction OBSERVATION without the drug (value_as_concept_id): left out"
  const qualifier = r.get("qualifier_concept_id")
  const event = qualifier !== "" && qualifier !== "0"
    ? conceptOf("adverse_event", vocabulary.codingsOf(Number(qualifier)).codings)
    : conceptOf("adverse_event", [], name ?? "adverse drug reaction")
  return [{ k: "adverse", src: r.get("observation_id"), patient: person, drug: drugOf(drugId), event, day }]
}

/** Maps the rows of one table (see the module comment). */
export class ObservationMapper {
  private readonly kinds = new Map<string, RowKind>()

  readonly table: Table
  private readonly vocabulary: OmopVocabulary
  private readonly axisModel: CompiledAxisModel
  private readonly drugOf: (id: string) => Concept

  constructor(table: Table, vocabulary: OmopVocabulary, axisModel: CompiledAxisModel, drugOf: (id: string) => Concept) {
    this.table = table
    this.vocabulary = vocabulary
    this.axisModel = axisModel
    this.drugOf = drugOf
  }

  /** What a concept pair makes a row. */
  kindOf(conceptText: string, sourceText: string): RowKind {
    const key = `${conceptText}|${sourceText}`
    let kind = this.kinds.get(key)
    if (kind !== undefined) return kind
    const concept = this.vocabulary.codingsOf(Number(conceptText || "0"))
    const cs = [...concept.codings, ...(sourceText !== "" && sourceText !== "0" ? this.vocabulary.codingsOf(Number(sourceText)).codings : [])]
    const own = concept.vocabulary === HCC_FACT_VOCABULARY && this.table === "observation" && (concept.code === "adherence" || concept.code === "ongoing")
      || concept.vocabulary === hccVocabularyOf("device_metric") && this.table === "measurement" && concept.code !== undefined
    if (this.table === "observation" && cs.some((c) => c.system === "snomed" && c.code !== undefined && ADVERSE_REACTION_CODES.has(c.code))) kind = { k: "adverse", name: concept.name }
    else if (own) kind = { k: "own", vocabulary: concept.vocabulary!, code: concept.code! }
    else {
      const direct = concept.vocabulary === HCC_AXIS_VOCABULARY ? this.axisModel.directAxis(concept.code) : undefined
      // An instrument the concept and the source concept both name (ETLs often give the same LOINC twice) counts once.
      const instruments = [...new Set(cs.flatMap((c) => (c.code === undefined ? [] : this.axisModel.instrumentsOf(c.system, c.code))))]
      kind = direct === undefined && instruments.length === 0 ? { k: "unused" } : { k: "scored", direct, instruments }
    }
    this.kinds.set(key, kind)
    return kind
  }

  get unusedNote(): string {
    return `${this.table.toUpperCase()} the axis model does not use: left out`
  }

  /**
   * The unit of a value: the UCUM code of unit_concept_id (CDM: the standard unit concept), else
   * unit_source_value as the source wrote it; undefined when neither says.
   */
  unitOf(unitConcept: string, unitSource: string): string | undefined {
    if (unitConcept !== "" && unitConcept !== "0") {
      const c = this.vocabulary.codingsOf(Number(unitConcept))
      if (c.vocabulary === "UCUM" && c.code !== undefined) return c.code
    }
    return unitSource === "" ? undefined : unitSource
  }

  /** The scores of a value (value_as_number in `unit`, value_as_concept_id, the text answer). */
  scoreOf(kind: Extract<RowKind, { k: "scored" }>, numberText: string, answer: string, text: string, unit: string | undefined): Scored | Problem {
    const quantity = numberText === "" ? undefined : Number(numberText)
    if (quantity !== undefined && !Number.isFinite(quantity)) return { path: "value_as_number", reason: `'${numberText}' is not a number` }
    const group = (ages: string): ScoreGroup => ({ ages, sums: new Array<number>(AXES.length).fill(0), counts: new Array<number>(AXES.length).fill(0) })
    if (kind.direct !== undefined) {
      if (quantity === undefined || quantity < 0 || quantity > 10) return { path: "value_as_number", reason: `a direct ${kind.direct} score must be a number in [0, 10], got '${numberText}'` }
      const g = group("")
      g.sums[AXES.indexOf(kind.direct)] = quantity
      g.counts[AXES.indexOf(kind.direct)] = 1
      return { direct: true, groups: [g], notes: [] }
    }
    const answerCodings = answer === "" || answer === "0" ? [] : this.vocabulary.codingsOf(Number(answer)).codings
    const notes: Array<string> = []
    const groups = new Map<string, ScoreGroup>()
    for (const instrument of kind.instruments) {
      const score = this.axisModel.score(instrument, { ...(quantity === undefined ? {} : { quantity }), unit, codings: answerCodings, text: text || undefined })
      if (typeof score === "string") {
        notes.push(unscoredNote(instrument, score))
        continue
      }
      const key = agesKey(instrument)
      let g = groups.get(key)
      if (g === undefined) groups.set(key, g = group(key))
      g.sums[AXES.indexOf(instrument.axis)]! += score
      g.counts[AXES.indexOf(instrument.axis)]!++
    }
    return { direct: false, groups: [...groups.values()], notes }
  }

  /** One row (the row-by-row read); `note` counts what an instrument left out. */
  mapRow(r: OmopRow, note: (reason: string) => void): RowResult {
    const t = this.table
    const person = idOf(r, "person_id")
    if (isProblem(person)) return person
    const kind = this.kindOf(r.get(`${t}_concept_id`), r.get(`${t}_source_concept_id`))
    switch (kind.k) {
      case "unused":
        return this.unusedNote
      case "adverse":
        return adverseOf(this.vocabulary, this.drugOf, r, person, kind.name)
      case "own":
        return ownFact(this.table, r, kind)
      case "scored": {
        const day = dayOf(r.get(`${t}_date`), `${t}_date`)
        if (day === undefined) return { path: `${t}_date`, reason: "is required (the month the score belongs to)" }
        if (isProblem(day)) return day
        const scored = this.scoreOf(kind, r.get("value_as_number"), r.get("value_as_concept_id"), r.get("value_as_string") || r.get("value_source_value"), this.unitOf(r.get("unit_concept_id"), r.get("unit_source_value")))
        if (isProblem(scored)) return scored
        scored.notes.forEach(note)
        if (scored.groups.length === 0) return
        return scored.groups.map((g): Fact => {
          const ages = agesOfKey(g.ages)
          return { k: "scores", patient: person, month: monthOfDay(day), day, direct: scored.direct, sums: g.sums, counts: g.counts, ...(ages === undefined ? {} : { ages }) }
        })
      }
    }
  }

}

/** Where a bulk read puts what it finds. */
export interface BulkSink {
  readonly staging: Staging
  readonly report: Report
  /** The DuckDB table of the PERSON table's ids (column `id`, text). */
  readonly persons: string
  readonly origin: (line: number) => Origin
  readonly onStep: (done: number) => Effect.Effect<void>
}

const AXIS_INDEXES = AXES.map((_, a) => a)

/**
 * Adds the summed scores' rows (person, month, latest day, direct, the axes' sums then counts, the
 * ages the instrument applies at) to the staging store as `scores` facts.
 */
const scoreFacts = (sink: BulkSink) => (groups: ReadonlyArray<ReadonlyArray<unknown>>) =>
  Effect.sync(() => {
    for (const g of groups) {
      const fact: Fact = {
        k: "scores",
        patient: String(g[0]),
        month: g[1] as number,
        day: g[2] as number,
        direct: g[3] === true,
        sums: AXIS_INDEXES.map((a) => (g[4 + a] as number | null) ?? 0),
        counts: AXIS_INDEXES.map((a) => g[4 + AXES.length + a] as number),
        ...(g[4 + 2 * AXES.length] == null && g[5 + 2 * AXES.length] == null
          ? {}
          : { ages: { from: (g[4 + 2 * AXES.length] as number | null) ?? null, below: (g[5 + 2 * AXES.length] as number | null) ?? null } })
      }
      sink.staging.add(sink.origin(0), fact)
    }
  })


/**
 * Reads a MEASUREMENT or OBSERVATION file in bulk (see the module comment). Returns false, having
 * added nothing, when a row has a problem found before anything is added (a person not in PERSON,
 * a scored row without a date, a value no rule takes), and also false
 * when a row mapped one by one has a problem (some facts added: the import is rejected anyway);
 * the caller then reads the file row by row to report each problem at its line. A failure to read
 * the file is its import problem (fileProblem.ts).
 */
export const readInBulk = (mapper: ObservationMapper, engine: Engine, file: OmopFile, sink: BulkSink): Effect.Effect<boolean, Error> =>
  Effect.gen(function*() {
    const t = mapper.table
    const { columns, from } = yield* relationOf(engine, file)
    const v = (name: string) => `trim(coalesce(${col(columns, name)}::VARCHAR, ''))`
    const pair = `${v(`${t}_concept_id`)} || '|' || ${v(`${t}_source_concept_id`)}`
    const text = `CASE WHEN ${v("value_as_string")} <> '' THEN ${v("value_as_string")} ELSE ${v("value_source_value")} END`
    // A value's unit: its concept and the source's text, the two resolved by the mapper (unitOf).
    const unit = `${v("unit_concept_id")} || '|' || ${v("unit_source_value")}`
    // Once rows naming a person PERSON lacks are found (and counted), the reads after leave them out.
    let ofPersons = ""
    const rowsOf = (where: string) =>
      `SELECT pair, p, day, num, answer, txt, unit, hash(pair, num, answer, txt, unit) AS h FROM (SELECT ${pair} AS pair, ${v("person_id")} AS p, ${DAY_SQL(v(`${t}_date`))} AS day,
        ${v("value_as_number")} AS num, ${v("value_as_concept_id")} AS answer, ${text} AS txt, ${unit} AS unit FROM ${from} WHERE ${where}${ofPersons})`
    const what = `${file.name}: not readable`
    // Counted only once the whole file is read in bulk (else the row-by-row read counts).
    const notes = new Map<string, number>()
    const note = (reason: string, n = 1) => notes.set(reason, (notes.get(reason) ?? 0) + n)

    // 1. One scan: the rows by concept pair and value, with those whose person is not in PERSON (whose
    // ids are integers, or the import fails; left out and counted, or with --strict problems reported
    // row by row) and those without a date. Each value is numbered (`key`)
    // and hashed (`h`): the scan below joins on the hash, or on the values themselves (as DuckDB
    // holds them) in the unlikely case two values share one.
    yield* engine.run(what, `CREATE OR REPLACE TEMP TABLE value_keys AS SELECT row_number() OVER () AS key, * FROM (
      SELECT pair, num, answer, txt, unit, h, count(*) AS n, count(*) FILTER (WHERE k.id IS NULL) AS bad, count(*) FILTER (WHERE day IS NULL AND k.id IS NOT NULL) AS undated
      FROM (${rowsOf("true")}) AS r LEFT JOIN ${sink.persons} AS k ON k.id = r.p GROUP BY ALL)`)
    const pairs = yield* engine.rows(what, "SELECT pair, sum(n), sum(bad) FROM value_keys GROUP BY pair")
    const orphans = pairs.reduce((sum, r) => sum + Number(r[2]), 0)
    if (orphans > 0 && sink.staging.strict) return false
    if (orphans > 0) ofPersons = ` AND ${v("person_id")} IN (SELECT id FROM ${sink.persons})`
    const one: Array<string> = []
    const scored = new Map<string, Extract<RowKind, { k: "scored" }>>()
    let rows = 0
    for (const [key, n, bad] of pairs) {
      rows += Number(n)
      const [concept, source] = key!.split("|") as [string, string]
      const kind = mapper.kindOf(concept, source)
      // A row naming no person is counted there, not here too.
      if (kind.k === "unused") note(mapper.unusedNote, Number(n) - Number(bad))
      else if (kind.k === "scored") scored.set(key!, kind)
      else one.push(key!)
    }
    yield* sink.onStep(0.4)

    // 2. Each distinct value of a scored pair, scored once; a scored row without a date is a problem.
    const isScored = `list_contains([${[...scored.keys()].map(literal).join(", ")}], pair)`
    const values = scored.size === 0 ? [] : yield* engine.rows(what, `SELECT key, pair, num, answer, txt, n - bad, undated, unit FROM value_keys WHERE ${isScored}`)
    if (values.some((r) => Number(r[6]) > 0)) return false
    const keyRows: Array<string> = []
    for (const [key, p, num, answer, txt, n, , unitPair] of values) {
      const [unitConcept, unitSource] = unitPair!.split("|") as [string, string]
      const result = mapper.scoreOf(scored.get(p!)!, num!, answer!, txt!, mapper.unitOf(unitConcept, unitSource))
      if (isProblem(result)) return false
      for (const reason of result.notes) note(reason, Number(n))
      if (result.direct) continue
      for (const g of result.groups) {
        const ages = agesOfKey(g.ages)
        keyRows.push(`(${key}, ${ages?.from ?? "NULL"}, ${ages?.below ?? "NULL"}, ${[...g.sums, ...g.counts].map(String).join(", ")})`)
      }
    }

    // 3. Rows mapped one by one (adverse reactions, the service's own facts), in file order: filtered
    // by their concept column alone (cheaper than the pair), the pair checked here.
    let failed = false
    if (one.length > 0) {
      let line = 0
      const ones = new Set(one)
      const concepts = [...new Set(one.map((key) => key.split("|")[0]!))]
      // Only the columns the rules read (a CSV reader then skips the others' values).
      const read = ["person_id", `${t}_id`, `${t}_concept_id`, `${t}_source_concept_id`, `${t}_date`, "value_as_number", "value_as_concept_id", "value_as_string", "value_source_value",
        "qualifier_concept_id", `${t}_event_id`, t === "observation" ? "obs_event_field_concept_id" : "meas_event_field_concept_id"].filter((c) => columns.has(c))
      yield* engine.stream(what, `SELECT ${read.map((c) => `${col(columns, c)}::VARCHAR AS ${c}`).join(", ")} FROM ${from} WHERE ${v(`${t}_concept_id`)} IN (${concepts.map(literal).join(", ")})${ofPersons}`, (names, records) =>
        Effect.sync(() => {
          if (failed) return
          const at = new Map(names.map((c, i) => [c, i]))
          for (const record of records) {
            const row: OmopRow = { line: ++line, get: (c) => (record[at.get(c) ?? -1] ?? "").trim(), has: (c) => at.has(c) }
            if (!ones.has(`${row.get(`${t}_concept_id`)}|${row.get(`${t}_source_concept_id`)}`)) continue
            const out = mapper.mapRow(row, note)
            if (out === undefined) continue
            if (typeof out === "string") note(out)
            else if (isProblem(out)) failed = true
            else for (const f of out) sink.staging.add(sink.origin(line), f)
            if (failed) return
          }
        }))
      if (failed) return false
    }
    yield* sink.onStep(0.6)

    // 4. The scores, summed per person, month and kind: direct scores (the value itself, checked
    // above) in SQL; instruments' through the scores of their values.
    const axes = AXES.map((_, a) => a)
    const toFacts = scoreFacts(sink)
    const groupBy = `p, (year(day) * 12 + month(day) - 1)::INTEGER AS ym, date_diff('day', DATE '1970-01-01', max(day))::INTEGER`
    const direct = [...scored].filter(([, kind]) => kind.direct !== undefined)
    if (direct.length > 0) {
      const axisOf = `(VALUES ${direct.map(([key, kind]) => `(${literal(key)}, ${AXES.indexOf(kind.direct!)})`).join(", ")}) AS d(pair, a)`
      yield* engine.streamValues(what, `SELECT ${groupBy}, true, ${axes.map((a) => `sum(x) FILTER (WHERE a = ${a})::DOUBLE`).join(", ")}, ${axes.map((a) => `count(x) FILTER (WHERE a = ${a})::INTEGER`).join(", ")}, NULL, NULL
        FROM (SELECT pair, p, day, TRY_CAST(num AS DOUBLE) AS x FROM (${rowsOf(`list_contains([${direct.map(([key]) => literal(key)).join(", ")}], ${pair})`)})) JOIN ${axisOf} USING (pair)
        GROUP BY p, ym`, toFacts)
    }
    if (keyRows.length > 0) {
      const [shared] = yield* engine.rows(what, "SELECT count(*) FROM (SELECT h FROM value_keys GROUP BY h HAVING count(*) > 1)")
      const join = Number(shared![0]) === 0 ? "JOIN value_keys USING (h)" : "JOIN value_keys USING (pair, num, answer, txt, unit)"
      yield* engine.run(what, `CREATE OR REPLACE TEMP TABLE value_scores (key BIGINT, age_from INTEGER, age_below INTEGER, ${axes.map((a) => `s${a} DOUBLE`).join(", ")}, ${axes.map((a) => `n${a} INTEGER`).join(", ")})`)
      for (let k = 0; k < keyRows.length; k += 1000) yield* engine.run(what, `INSERT INTO value_scores VALUES ${keyRows.slice(k, k + 1000).join(", ")}`)
      const instruments = [...scored].filter(([, kind]) => kind.direct === undefined).map(([key]) => literal(key))
      yield* engine.streamValues(what, `SELECT ${groupBy}, false, ${axes.map((a) => `sum(s${a})::DOUBLE`).join(", ")}, ${axes.map((a) => `sum(n${a})::INTEGER`).join(", ")}, age_from, age_below
        FROM (${rowsOf(`list_contains([${instruments.join(", ")}], ${pair})`)}) AS r ${join} JOIN value_scores USING (key) GROUP BY p, ym, age_from, age_below`, toFacts)
    }
    sink.report.count(t, rows)
    for (const [reason, n] of notes) sink.report.note(reason, n)
    if (orphans > 0) sink.report.orphan(`${t}.person_id`, orphans)
    return true
  }).pipe(readingFile(engine, file))
