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
import { Effect } from "effect"
import { AXES, type Axis } from "../../plugin/axes.ts"
import { monthOfDay } from "../../health/calendar.ts"
import type { CompiledAxisModel, Instrument } from "../AxisModel.ts"
import { conceptOf } from "../concepts.ts"
import { type Engine, literal } from "../Engine.ts"
import type { Concept, Fact, Problem } from "../facts.ts"
import type { Report } from "../Report.ts"
import type { Origin, Staging } from "../Staging.ts"
import { FIELD_CONCEPT } from "./cdm54.ts"
import { DAY_SQL, dayOf, idOf, isProblem, type RowResult } from "./cells.ts"
import type { OmopVocabulary } from "./OmopVocabulary.ts"
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

/** A scored value: per axis (AXES order) the sum and number of 0–10 scores, and why any instrument left it out. */
interface Scored {
  readonly direct: boolean
  readonly sums: ReadonlyArray<number>
  readonly counts: ReadonlyArray<number>
  readonly notes: ReadonlyArray<string>
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
      const instruments = cs.flatMap((c) => (c.code === undefined ? [] : this.axisModel.instrumentsOf(c.system, c.code)))
      kind = direct === undefined && instruments.length === 0 ? { k: "unused" } : { k: "scored", direct, instruments }
    }
    this.kinds.set(key, kind)
    return kind
  }

  get unusedNote(): string {
    return `${this.table.toUpperCase()} the axis model does not use: left out`
  }

  /** The scores of a value (value_as_number, value_as_concept_id, the text answer). */
  scoreOf(kind: Extract<RowKind, { k: "scored" }>, numberText: string, answer: string, text: string): Scored | Problem {
    const quantity = numberText === "" ? undefined : Number(numberText)
    if (quantity !== undefined && !Number.isFinite(quantity)) return { path: "value_as_number", reason: `'${numberText}' is not a number` }
    const sums = new Array<number>(AXES.length).fill(0)
    const counts = new Array<number>(AXES.length).fill(0)
    if (kind.direct !== undefined) {
      if (quantity === undefined || quantity < 0 || quantity > 10) return { path: "value_as_number", reason: `a direct ${kind.direct} score must be a number in [0, 10], got '${numberText}'` }
      sums[AXES.indexOf(kind.direct)] = quantity
      counts[AXES.indexOf(kind.direct)] = 1
      return { direct: true, sums, counts, notes: [] }
    }
    const answerCodings = answer === "" || answer === "0" ? [] : this.vocabulary.codingsOf(Number(answer)).codings
    const notes: Array<string> = []
    for (const instrument of kind.instruments) {
      const score = this.axisModel.score(instrument, { ...(quantity === undefined ? {} : { quantity }), codings: answerCodings, text: text || undefined })
      if (typeof score === "string") {
        notes.push(`${instrument.id}: ${score === "out_of_range" ? "value out of the instrument's range" : score === "unknown_answer" ? "answer the model does not score" : "no value"}: left out`)
        continue
      }
      sums[AXES.indexOf(instrument.axis)]! += score
      counts[AXES.indexOf(instrument.axis)]!++
    }
    return { direct: false, sums, counts, notes }
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
        return this.adverse(r, person, kind.name)
      case "own":
        return this.ownFact(r, kind)
      case "scored": {
        const day = dayOf(r.get(`${t}_date`), `${t}_date`)
        if (day === undefined) return { path: `${t}_date`, reason: "is required (the month the score belongs to)" }
        if (isProblem(day)) return day
        const scored = this.scoreOf(kind, r.get("value_as_number"), r.get("value_as_concept_id"), r.get("value_as_string") || r.get("value_source_value"))
        if (isProblem(scored)) return scored
        scored.notes.forEach(note)
        if (!scored.counts.some((n) => n > 0)) return
        return [{ k: "scores", patient: person, month: monthOfDay(day), day, direct: scored.direct, sums: scored.sums, counts: scored.counts }]
      }
    }
  }

  /** The service's own facts: a course's adherence or that it is ongoing; a device outcome. */
  private ownFact(r: OmopRow, kind: Extract<RowKind, { k: "own" }>): RowResult {
    const t = this.table
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

  private adverse(r: OmopRow, person: string, name: string | undefined): RowResult {
    const day = dayOf(r.get("observation_date"), "observation_date")
    if (day === undefined) return { path: "observation_date", reason: "is required" }
    if (isProblem(day)) return day
    const drugId = r.get("value_as_concept_id")
    if (drugId === "" || drugId === "0") return "adverse reaction OBSERVATION without the drug (value_as_concept_id): left out"
    const qualifier = r.get("qualifier_concept_id")
    const event = qualifier !== "" && qualifier !== "0"
      ? conceptOf("adverse_event", this.vocabulary.codingsOf(Number(qualifier)).codings)
      : conceptOf("adverse_event", [], name ?? "adverse drug reaction")
    return [{ k: "adverse", src: r.get("observation_id"), patient: person, drug: this.drugOf(drugId), event, day }]
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

/**
 * Reads a MEASUREMENT or OBSERVATION file in bulk (see the module comment). Returns false, having
 * added nothing, when a row has a problem found before anything is added (a person id that is not
 * an integer or not in PERSON, a scored row without a date, a value no rule takes), and also false
 * when a row mapped one by one has a problem (some facts added: the import is rejected anyway);
 * the caller then reads the file row by row to report each problem at its line.
 */
export const readInBulk = (mapper: ObservationMapper, engine: Engine, file: OmopFile, sink: BulkSink): Effect.Effect<boolean, Error> =>
  Effect.gen(function*() {
    const t = mapper.table
    const { columns, from } = yield* relationOf(engine, file)
    const v = (name: string) => `trim(coalesce(${col(columns, name)}::VARCHAR, ''))`
    const pair = `${v(`${t}_concept_id`)} || '|' || ${v(`${t}_source_concept_id`)}`
    const what = `${file.name}: not readable`
    // Counted only once the whole file is read in bulk (else the row-by-row read counts).
    const notes = new Map<string, number>()
    const note = (reason: string, n = 1) => notes.set(reason, (notes.get(reason) ?? 0) + n)

    // 1. The concept pairs and their rows; a person id that is not an integer, or not in PERSON, is a problem.
    const pairs = yield* engine.rows(what, `SELECT pair, count(*), count(*) FILTER (WHERE NOT regexp_full_match(p, '-?\\d+') OR k.id IS NULL)
      FROM (SELECT ${pair} AS pair, ${v("person_id")} AS p FROM ${from}) AS r LEFT JOIN ${sink.persons} AS k ON k.id = r.p GROUP BY pair`)
    if (pairs.some((r) => Number(r[2]) > 0)) return false
    const one: Array<string> = []
    const scored: Array<readonly [string, Extract<RowKind, { k: "scored" }>]> = []
    let rows = 0
    for (const [key, n] of pairs) {
      rows += Number(n)
      const [concept, source] = key!.split("|") as [string, string]
      const kind = mapper.kindOf(concept, source)
      if (kind.k === "unused") note(mapper.unusedNote, Number(n))
      else if (kind.k === "scored") scored.push([key!, kind])
      else one.push(key!)
    }
    yield* sink.onStep(0.25)

    // 2. The scored rows' distinct values, each scored once; a row without a date is a problem.
    const scoredPairs = `(VALUES ${scored.length === 0 ? "(NULL, NULL)" : scored.map(([key], i) => `(${literal(key)}, ${i})`).join(", ")}) AS sp(pair, i)`
    const text = `CASE WHEN ${v("value_as_string")} <> '' THEN ${v("value_as_string")} ELSE ${v("value_source_value")} END`
    const scoredRows = `SELECT sp.i, ${v("person_id")} AS p, ${DAY_SQL(v(`${t}_date`))} AS day, ${v("value_as_number")} AS num, ${v("value_as_concept_id")} AS answer, ${text} AS txt
      FROM ${from} JOIN ${scoredPairs} ON sp.pair = ${pair}`
    // Each distinct value gets a number: the join back is on the values as DuckDB holds them, not as text.
    const values = yield* engine.rows(what, `CREATE OR REPLACE TEMP TABLE value_keys AS
        SELECT row_number() OVER () AS key, * FROM (SELECT i, num, answer, txt, count(*) AS n, count(*) FILTER (WHERE day IS NULL) AS undated FROM (${scoredRows}) GROUP BY ALL);
      SELECT key, i, num, answer, txt, n, undated FROM value_keys`)
    if (values.some((r) => Number(r[6]) > 0)) return false
    const keyRows: Array<string> = []
    for (const [key, i, num, answer, txt, n] of values) {
      const result = mapper.scoreOf(scored[Number(i)]![1], num!, answer!, txt!)
      if (isProblem(result)) return false
      for (const reason of result.notes) note(reason, Number(n))
      if (!result.counts.some((c) => c > 0)) continue
      keyRows.push(`(${key}, ${result.direct}, ${[...result.sums, ...result.counts].map(String).join(", ")})`)
    }
    yield* sink.onStep(0.5)

    // 3. Rows mapped one by one (adverse reactions, the service's own facts), in file order.
    let failed = false
    if (one.length > 0) {
      let line = 0
      yield* engine.stream(what, `SELECT COLUMNS(*)::VARCHAR FROM ${from} WHERE list_contains([${one.map(literal).join(", ")}], ${pair})`, (names, records) =>
        Effect.sync(() => {
          if (failed) return
          const at = new Map(names.map((c, i) => [c, i]))
          for (const record of records) {
            const row: OmopRow = { line: ++line, get: (c) => (record[at.get(c) ?? -1] ?? "").trim(), has: (c) => at.has(c) }
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
    yield* sink.onStep(0.75)

    // 4. The scores, summed per person, month and kind (direct or instrument).
    const done = () => {
      sink.report.count(t, rows)
      for (const [reason, n] of notes) sink.report.note(reason, n)
      return true
    }
    if (keyRows.length === 0) return done()
    const axes = AXES.map((_, a) => a)
    yield* engine.run(what, `CREATE OR REPLACE TEMP TABLE value_scores (key BIGINT, direct BOOLEAN, ${axes.map((a) => `s${a} DOUBLE`).join(", ")}, ${axes.map((a) => `n${a} INTEGER`).join(", ")})`)
    for (let k = 0; k < keyRows.length; k += 1000) yield* engine.run(what, `INSERT INTO value_scores VALUES ${keyRows.slice(k, k + 1000).join(", ")}`)
    yield* engine.stream(what, `SELECT p, year(day) * 12 + month(day) - 1, date_diff('day', DATE '1970-01-01', max(day)), direct, ${axes.map((a) => `sum(s${a})`).join(", ")}, ${axes.map((a) => `sum(n${a})`).join(", ")}
      FROM (${scoredRows}) AS r JOIN value_keys USING (i, num, answer, txt) JOIN value_scores USING (key) GROUP BY p, year(day), month(day), direct`, (_, groups) =>
      Effect.sync(() => {
        for (const g of groups) {
          const fact: Fact = {
            k: "scores",
            patient: g[0]!,
            month: Number(g[1]),
            day: Number(g[2]),
            direct: g[3] === "true",
            sums: axes.map((a) => Number(g[4 + a])),
            counts: axes.map((a) => Number(g[4 + AXES.length + a]))
          }
          sink.staging.add(sink.origin(0), fact)
        }
      }))
    return done()
  })
