/**
 * `hcc data import --format omop`: an OMOP CDM 5.3 or 5.4 folder → the health dataset (docs/data.md,
 * "Importing OMOP CDM", rule by rule; the columns read are the same in both versions, except a text
 * answer, OBSERVATION's `value_as_string` in both and `value_source_value` in 5.4). The vocabulary tables first (CONCEPT turns concept ids into
 * standard codes; "Maps to" relationships and ingredient ancestors when present), then locations,
 * care sites, providers, deaths and persons, then the clinical tables, each row mapped to the
 * same facts the FHIR import makes and collected in the same staging store: checked whole, and
 * written as one new dataset in one transaction, or not at all.
 */
import { Effect } from "effect"
import { join } from "node:path"
import { parseDate } from "../../health/calendar.ts"
import { ImportRejected } from "../../pipeline/Report.ts"
import { lookup } from "../../health/ConceptMaps.ts"
import { conceptOf, deviceCategoryOf, deviceEventsOf, isSocialHistory, SOCIAL_HISTORY_NOTE, type SourceCoding } from "../../pipeline/concepts.ts"
import type { Concept, EncounterKind } from "../../pipeline/facts.ts"
import { Engine } from "../../pipeline/Engine.ts"
import type { PhaseProgress } from "../../health/progress.ts"
import { finishImport, type ImportSetup, type ImportSummary, loadSetup } from "../../pipeline/importCommon.ts"
import { surveillanceOf } from "../csv/surveillance.ts"
import { dayOf, idOf, integerCell, isProblem, type RowResult } from "./cells.ts"
import { drugExposureFacts } from "./drugExposure.ts"
import { ObservationMapper, readInBulk } from "./observations.ts"
import { HCC_REGION_PREFIX, HCC_STUDY_PREFIX } from "./ownTerms.ts"
import { OmopVocabulary } from "./OmopVocabulary.ts"
import { findOmopFiles, forEachRow, isFolder, type OmopFile, type OmopRow, type OmopTable } from "./tables.ts"
import { col, loadVocabulary, relationOf } from "./vocabularyTables.ts"
import { type Origin, PARTS } from "../../pipeline/stagingTables.ts"

/** Options of an OMOP import. */
export interface OmopImportOptions {
  readonly folder: string
  /** `YYYY-MM-DD`; default CDM_SOURCE.source_release_date, else the latest date in the data not after today. */
  readonly asOf?: string | undefined
  readonly axisModelFile?: string | undefined
  readonly regionMapFile?: string | undefined
  readonly stagingDir: string
  /** A row naming a person PERSON lacks is a problem, not a row left out and counted. */
  readonly strict?: boolean | undefined
  /** Each phase's share done: vocabulary, reading, staging, writing. */
  readonly onProgress?: PhaseProgress | undefined
  /** Runs with the summary once the new dataset is in place (see finishImport). */
  readonly onSwitched?: ((summary: ImportSummary) => Effect.Effect<void>) | undefined
}

/** OMOP's Gender concepts (vocabulary Gender): 8532 FEMALE, 8507 MALE, 8521 OTHER, 8570 AMBIGUOUS, 8551 UNKNOWN. */
const GENDER: Readonly<Record<string, "female" | "male" | "other" | "unknown">> = { "8532": "female", "8507": "male", "8521": "other", "8570": "other", "8551": "unknown" }

/** Reads an OMOP CDM folder (see the module comment); fails with ImportRejected listing every problem. */
export const importOmop = (options: OmopImportOptions) =>
  Effect.gen(function*() {
    const started = performance.now()
    if (!isFolder(options.folder)) return yield* Effect.fail(new ImportRejected([`${options.folder}: no such folder`], 1))
    const { files } = findOmopFiles(options.folder)
    const missing = (["person"] as const).filter((t) => !files.some((f) => f.table === t))
    if (missing.length > 0) return yield* Effect.fail(new ImportRejected(missing.map((t) => `${t}.csv: missing (required; file names in any case, .csv, .tsv or .parquet)`), missing.length))
    const asOf = options.asOf === undefined ? undefined : parseDate(options.asOf)
    if (asOf !== undefined && Number.isNaN(asOf)) return yield* Effect.fail(new ImportRejected([`--as-of: '${options.asOf}' is not a date (YYYY-MM-DD)`], 1))
    return yield* Effect.acquireUseRelease(
      Effect.map(loadSetup(options, "omop"), (setup) => ({
        setup,
        vocabulary: new OmopVocabulary(join(options.stagingDir, `import-${setup.id}-vocabulary.staging.db`)),
        engine: new Engine(join(options.stagingDir, `import-${setup.id}.spill`))
      })),
      ({ engine, setup, vocabulary }) => read(options, setup, vocabulary, engine, files, asOf, started),
      ({ engine, setup, vocabulary }) => Effect.sync(() => {
        setup.staging.close()
        vocabulary.dispose()
        engine.dispose()
      })
    )
  })

/** condition_status_concept_id of a possible, not established, diagnosis (the Condition Status vocabulary). */
const PRELIMINARY_DIAGNOSIS = "32899"

const read = (options: OmopImportOptions, setup: ImportSetup, vocabulary: OmopVocabulary, engine: Engine, files: ReadonlyArray<OmopFile>, asOf: number | undefined, started: number) =>
  Effect.gen(function*() {
    const { report, staging } = setup
    // Progress by bytes: the vocabulary tables, then the rest.
    const isVocabulary = (t: OmopTable) => t === "concept" || t === "concept_relationship" || t === "concept_ancestor"
    const totals = { vocabulary: 0, reading: 0 }
    for (const f of files) totals[isVocabulary(f.table) ? "vocabulary" : "reading"] += f.bytes
    const done = { vocabulary: 0, reading: 0 }
    const locations = new Map<string, { readonly state: string; readonly country: string; readonly region: string | undefined }>()
    /** care_site_id → the organization's id: the device study a care site names in the service's own terms, else care_site_id. */
    const careSites = new Map<string, string>()
    const providers = new Map<string, string>()
    const deaths = new Map<string, number>()

    const codings = (id: string, sourceId: string, sourceValue: string): ReadonlyArray<SourceCoding> => {
      const out: Array<SourceCoding> = []
      for (const c of [id, sourceId]) if (c !== "" && c !== "0") out.push(...vocabulary.codingsOf(Number(c)).codings)
      if (out.length === 0 && sourceValue !== "") out.push({ display: sourceValue })
      return out
    }
    const conceptFor = (kind: "condition" | "drug" | "adverse_event", id: string, sourceId: string, sourceValue: string): Concept => {
      if (kind === "drug" && id !== "" && id !== "0") {
        const ingredients = vocabulary.ingredientsOf(Number(id))
        if (ingredients.length > 0) {
          const targets = [...new Set(ingredients.flatMap((i) => conceptOf("drug", vocabulary.codingsOf(i).codings).targets))]
          if (targets.length > 0) return { ...conceptOf("drug", codings(id, sourceId, sourceValue), sourceValue || undefined), targets }
        }
      }
      const c = codings(id, sourceId, sourceValue)
      const concept = conceptOf(kind, c, sourceValue || vocabulary.codingsOf(Number(id || "0")).name)
      // A SNOMED subtype the map does not name is the conditions it descends from (CONCEPT_ANCESTOR):
      // type 2 diabetes with a complication is type 2 diabetes.
      if (kind === "condition" && concept.targets.length === 0 && id !== "" && id !== "0") {
        const targets = [...new Set(vocabulary.mappedConditionAncestorsOf(Number(id)).flatMap((a) => conceptOf("condition", vocabulary.codingsOf(a).codings).targets))]
        if (targets.length > 0) return { ...concept, targets }
      }
      return concept
    }

    /**
     * The ingredients a drug row is exposure to, one concept each (OHDSI's DRUG_ERA is per
     * ingredient: a combination product is exposure to each of its ingredients, mapped or not),
     * else the drug's own concept when the vocabulary gives it no ingredient.
     */
    const drugIngredients = (id: string, sourceId: string, sourceValue: string): ReadonlyArray<Concept> => {
      const ingredients = id === "" || id === "0" ? [] : vocabulary.ingredientsOf(Number(id))
      if (ingredients.length === 0) return [conceptFor("drug", id, sourceId, sourceValue)]
      return ingredients.map((i) => {
        const own = vocabulary.codingsOf(i)
        return conceptOf("drug", own.codings, own.name)
      })
    }

    /** Reads a file row by row (none when `onRow` is undefined: the file was read some other way) and counts it done. */
    const eachFile = (file: OmopFile, onRow: ((row: OmopRow, origin: Origin) => RowResult) | undefined) =>
      Effect.gen(function*() {
        const table = file.table
        if (onRow !== undefined) {
          yield* forEachRow(file, engine, (rows) => {
            for (const row of rows) {
              const place = { name: file.name, part: 0, line: row.line }
              const origin: Origin = { file: files.indexOf(file) * PARTS, line: row.line, place, type: table }
              report.count(table)
              const out = onRow(row, origin)
              if (out === undefined) continue
              if (typeof out === "string") report.note(out)
              else if (isProblem(out)) report.problem(place, out.path, out.reason)
              else for (const f of out) table === "person" ? staging.addPhaseOne(origin, f) : staging.add(origin, f)
            }
          })
        }
        const phase = isVocabulary(table) ? "vocabulary" : "reading"
        done[phase] += file.bytes
        yield* setup.progress(phase, done[phase] / Math.max(1, totals[phase]))
      })
    const each = (table: OmopTable, onRow: (row: OmopRow, origin: Origin) => RowResult) =>
      Effect.forEach(files.filter((f) => f.table === table), (file) => eachFile(file, onRow), { discard: true })

    // Vocabulary: what the tables use of it, through DuckDB; a table with rows whose ids are not
    // integers is read row by row, to report each of them.
    yield* setup.progress("vocabulary", 0)
    const badTables = yield* loadVocabulary(engine, files, {
      addConcept: (id, vocabularyId, code, name, conceptClass) => vocabulary.addConcept(id, vocabularyId, code, name, conceptClass),
      addMapsTo: (source, target) => vocabulary.addMapsTo(source, target),
      addAncestor: (descendant, ancestor) => vocabulary.addAncestor(descendant, ancestor),
      count: (table, rows) => report.count(table, rows),
      leftOut: (table, rows) => rows > 0 && report.note(`${table} rows the data does not use${table === "concept_relationship" ? " (or not a valid Maps to)" : ""}: left out`, rows)
    }, (d) => setup.progress("vocabulary", d))
    const ids = (...columns: ReadonlyArray<string>) => (r: OmopRow) => {
      for (const c of columns) {
        const id = idOf(r, c)
        if (isProblem(id)) return id
      }
    }
    const checks = { concept: ids("concept_id"), concept_relationship: ids("concept_id_1", "concept_id_2"), concept_ancestor: ids("descendant_concept_id", "ancestor_concept_id") } as const
    for (const table of badTables) yield* each(table, checks[table as keyof typeof checks])
    vocabulary.close()
    if (!vocabulary.hasConcepts) report.note("no CONCEPT table: concepts are known by concept_id and source value only")
    // The service's own entries (an export of ours): the dataset's vocabulary, used or not.
    const conceptFile = files.find((f) => f.table === "concept")
    for (const e of vocabulary.ownEntries()) {
      staging.addPhaseOne({ file: 0, line: 0, place: { name: conceptFile?.name ?? "concept", part: 0, line: 0 }, type: "concept" }, { k: "vocabulary", ...e })
    }

    // The CDM's own date "for which the source data are most current" (CDM_SOURCE) is the dataset's
    // as_of unless --as-of is given; one after the day of the import is counted, never taken.
    yield* setup.progress("reading", 0)
    let released: number | undefined
    yield* each("cdm_source", (r) => {
      const day = dayOf(r.get("source_release_date"), "source_release_date")
      if (day === undefined) return
      if (isProblem(day)) return "CDM_SOURCE.source_release_date not a date: not taken for as_of"
      if (day > staging.today) return "CDM_SOURCE.source_release_date after the day of the import: not taken for as_of"
      released = Math.max(released ?? day, day)
    })

    // What persons and visits refer to.
    yield* each("location", (r) => {
      const country = r.get("country_source_value") || (r.get("country_concept_id") !== "" ? vocabulary.codingsOf(Number(r.get("country_concept_id"))).name ?? "" : "")
      const own = r.get("location_source_value")
      locations.set(integerCell(r, "location_id"), { state: r.get("state"), country, region: own.startsWith(HCC_REGION_PREFIX) ? own.slice(HCC_REGION_PREFIX.length) : undefined })
    })
    const regionOf = (locationId: string) => {
      const l = locations.get(locationId)
      return l?.region ?? setup.regions.regionOf(l === undefined ? undefined : { state: l.state || undefined, country: l.country || undefined })
    }
    yield* each("care_site", (r, origin) => {
      const id = idOf(r, "care_site_id")
      if (isProblem(id)) return id
      const own = r.get("care_site_source_value")
      const org = own.startsWith(HCC_STUDY_PREFIX) && own.length > HCC_STUDY_PREFIX.length ? own.slice(HCC_STUDY_PREFIX.length) : id
      careSites.set(id, org)
      staging.addPhaseOne(origin, { k: "organization", src: org, identifiers: [], region: regionOf(integerCell(r, "location_id")), name: r.get("care_site_name") || id })
    })
    const orgOfCareSite = (careSiteId: string) => careSiteId === "" ? null : careSites.get(careSiteId) ?? careSiteId
    yield* each("provider", (r) => {
      const org = orgOfCareSite(integerCell(r, "care_site_id"))
      if (org !== null) providers.set(integerCell(r, "provider_id"), org)
    })
    yield* each("death", (r) => {
      const person = idOf(r, "person_id")
      if (isProblem(person)) return person
      const day = dayOf(r.get("death_date"), "death_date")
      if (day === undefined) return { path: "death_date", reason: "is required" }
      if (isProblem(day)) return day
      deaths.set(person, day)
    })
    yield* each("person", (r) => {
      const id = idOf(r, "person_id")
      if (isProblem(id)) return id
      // The CDM requires year_of_birth, but a person without one (as FHIR allows) has no age, which
      // every cohort needs: left out with all about them, counted (Staging.ts), not a reason to refuse the rest.
      const given = r.get("year_of_birth")
      const year = given === "" ? null : Number(given)
      if (year !== null && !Number.isInteger(year)) return { path: "year_of_birth", reason: `'${given}' is not a year` }
      // Judged against the data, not the calendar: a de-identified dataset may be born in 2149 (below, and docs/data.md "Dates").
      if (year !== null && (year < 1000 || year > 9999)) return { path: "year_of_birth", reason: `${year} is not a four-digit year` }
      const gender = GENDER[integerCell(r, "gender_concept_id")]
      const sourceValue = r.get("person_source_value")
      return [{ k: "patient", src: id, identifiers: sourceValue === "" ? [] : [`?|${sourceValue}`], birthYear: year, sex: gender ?? "unknown", region: regionOf(integerCell(r, "location_id")), death: deaths.get(id) ?? null }]
    })
    staging.closePhaseOne()
    // The persons' ids, for the bulk reads of MEASUREMENT and OBSERVATION (a row of a person not in PERSON is a problem).
    yield* engine.run("person ids", "CREATE OR REPLACE TEMP TABLE persons (id VARCHAR)")
    for (const file of files.filter((f) => f.table === "person")) {
      const { columns, from } = yield* relationOf(engine, file)
      yield* engine.run(`${file.name}: not readable`, `INSERT INTO persons SELECT DISTINCT trim(coalesce(${col(columns, "person_id")}::VARCHAR, '')) FROM ${from}`)
    }

    // A person's observation periods end where their follow-up does (implants.ts).
    yield* each("observation_period", (r) => {
      const person = idOf(r, "person_id")
      if (isProblem(person)) return person
      const end = dayOf(r.get("observation_period_end_date"), "observation_period_end_date")
      const start = dayOf(r.get("observation_period_start_date"), "observation_period_start_date")
      if (isProblem(end)) return end
      if (isProblem(start)) return start
      if (end !== undefined) return [{ k: "observed", patient: person, start: start ?? null, end }]
    })

    const kindOf = (id: string) => codings(id, "", "").flatMap((c) => (c.system !== undefined && c.code !== undefined ? lookup("encounter_class", { system: c.system === "Visit" ? "visit" : c.system, code: c.code }) : []))[0]?.target as EncounterKind | undefined
    /**
     * A visit concept's kind, once per concept (millions of rows name a handful): a concept the map
     * does not name is the kind of the top visit concept it descends from (an office visit 581477 →
     * Outpatient Visit 9202), where CONCEPT_ANCESTOR says.
     */
    const visitKinds = new Map<string, EncounterKind | null>()
    const visitKindOf = (concept: string): EncounterKind | null => {
      let kind = visitKinds.get(concept)
      if (kind === undefined) {
        kind = kindOf(concept) ?? (concept === "" ? undefined : vocabulary.topVisitsOf(Number(concept)).map((top) => kindOf(String(top))).find((k) => k !== undefined)) ?? null
        visitKinds.set(concept, kind)
      }
      return kind
    }
    yield* each("visit_occurrence", (r) => {
      const id = idOf(r, "visit_occurrence_id")
      const person = idOf(r, "person_id")
      const start = dayOf(r.get("visit_start_date"), "visit_start_date")
      const end = dayOf(r.get("visit_end_date"), "visit_end_date")
      for (const x of [id, person, start, end]) if (isProblem(x)) return x
      if (start === undefined) return { path: "visit_start_date", reason: "is required" }
      const concept = r.get("visit_concept_id")
      const kind = visitKindOf(concept)
      if (end !== undefined && (end as number) < (start as number)) report.note("VISIT_OCCURRENCE ending before it starts: kept as one day")
      return [{ k: "encounter", src: id as string, patient: person as string, kind, cls: vocabulary.codingsOf(Number(concept || "0")).code ?? `concept ${concept}`, start: start as number, end: Math.max(start as number, (end as number | undefined) ?? (start as number)), org: orgOfCareSite(integerCell(r, "care_site_id")) }]
    })

    yield* each("condition_occurrence", (r) => {
      const person = idOf(r, "person_id")
      if (isProblem(person)) return person
      // A possible diagnosis is not a diagnosis the analytics may count (as FHIR's provisional).
      if (integerCell(r, "condition_status_concept_id") === PRELIMINARY_DIAGNOSIS) return "CONDITION_OCCURRENCE with condition_status_concept_id 32899 (Preliminary diagnosis): left out"
      const day = dayOf(r.get("condition_start_date"), "condition_start_date")
      if (isProblem(day)) return day
      const all = codings(r.get("condition_concept_id"), r.get("condition_source_concept_id"), r.get("condition_source_value"))
      if (all.length === 0) return { path: "condition_concept_id", reason: "names no condition (0, and no source value)" }
      const concept = conceptFor("condition", r.get("condition_concept_id"), r.get("condition_source_concept_id"), r.get("condition_source_value"))
      if (isSocialHistory(all, concept)) return `CONDITION_OCCURRENCE ${SOCIAL_HISTORY_NOTE}`
      return [{ k: "condition", patient: person, concept, day: day ?? null, events: day === undefined ? [] : deviceEventsOf(all) }]
    })

    yield* each("drug_exposure", (r) => drugExposureFacts(r, drugIngredients(r.get("drug_concept_id"), r.get("drug_source_concept_id"), r.get("drug_source_value")), (reason) => report.note(reason)))

    const orgOf = (r: OmopRow) => providers.get(integerCell(r, "provider_id")) ?? null
    yield* each("procedure_occurrence", (r) => {
      const id = idOf(r, "procedure_occurrence_id")
      const person = idOf(r, "person_id")
      const day = dayOf(r.get("procedure_date"), "procedure_date")
      for (const x of [id, person, day]) if (isProblem(x)) return x
      const all = codings(r.get("procedure_concept_id"), r.get("procedure_source_concept_id"), r.get("procedure_source_value"))
      const device = deviceCategoryOf(all)
      const events = deviceEventsOf(all)
      if (device === null && events.length === 0) return "PROCEDURE_OCCURRENCE not about an implant: left out"
      if (day === undefined) return { path: "procedure_date", reason: "is required for an implant or a revision" }
      return [{ k: "procedure", src: id as string, patient: person as string, device, deviceRefs: [], day: day as number, org: orgOf(r), encounter: integerCell(r, "visit_occurrence_id") || null, events }]
    })

    yield* each("device_exposure", (r) => {
      const id = idOf(r, "device_exposure_id")
      const person = idOf(r, "person_id")
      const day = dayOf(r.get("device_exposure_start_date"), "device_exposure_start_date")
      for (const x of [id, person, day]) if (isProblem(x)) return x
      const all = codings(r.get("device_concept_id"), r.get("device_source_concept_id"), r.get("device_source_value"))
      const device = deviceCategoryOf(all)
      if (device === null) return "DEVICE_EXPOSURE of no implant category: left out"
      if (day === undefined) return { path: "device_exposure_start_date", reason: "is required" }
      return [{ k: "procedure", src: id as string, patient: person as string, device, deviceRefs: [], day: day as number, org: orgOf(r), encounter: integerCell(r, "visit_occurrence_id") || null, events: [] }]
    })

    // MEASUREMENT and OBSERVATION: in bulk, else (a row with a problem) row by row (observations.ts).
    const drugOf = (id: string) => conceptFor("drug", id, "", "")
    for (const table of ["measurement", "observation"] as const) {
      const mapper = new ObservationMapper(table, vocabulary, setup.axisModel, drugOf)
      for (const file of files.filter((f) => f.table === table)) {
        const fileIndex = files.indexOf(file)
        const inBulk = yield* readInBulk(mapper, engine, file, {
          staging,
          report,
          persons: "persons",
          origin: (line) => ({ file: fileIndex * PARTS, line, place: { name: file.name, part: 0, line }, type: table }),
          onStep: (share) => setup.progress("reading", (done.reading + share * file.bytes) / Math.max(1, totals.reading))
        })
        yield* eachFile(file, inBulk ? undefined : (r) => mapper.mapRow(r, (reason) => report.note(reason)))
      }
    }

    // The eras the source derived itself (DRUG_ERA, CONDITION_ERA): compared with the import's, never stored (reconcile.ts).
    const era = (table: "drug_era" | "condition_era") => (r: OmopRow): RowResult => {
      const person = idOf(r, "person_id")
      const start = dayOf(r.get(`${table}_start_date`), `${table}_start_date`)
      const end = dayOf(r.get(`${table}_end_date`), `${table}_end_date`)
      for (const x of [person, start, end]) if (isProblem(x)) return x
      if (start === undefined || end === undefined) return `${table.toUpperCase()} without a start or an end: not compared`
      const concept = table === "drug_era" ? `${r.get("drug_concept_id")}` : r.get("condition_concept_id")
      const concepts = table === "drug_era" ? drugIngredients(concept, "", "") : [conceptFor("condition", concept, "", "")]
      return concepts.map((c) => ({ k: "source_era", table, patient: person as string, concept: c, start: start as number, end: end as number }))
    }
    yield* each("drug_era", era("drug_era"))
    yield* each("condition_era", era("condition_era"))

    if (report.read.get("person") === undefined && report.problemCount === 0) report.problem("person", "", "the PERSON table has no rows")
    const surveillance = yield* surveillanceOf([options.folder], setup)
    if (report.problemCount > 0) return yield* Effect.fail(new ImportRejected(report.problems, report.problemCount))
    // A release date does not date a shifted dataset's own dates (Staging.shifted).
    if (asOf === undefined && released !== undefined && staging.shifted) {
      report.note("CDM_SOURCE.source_release_date before the data's (shifted) dates: not taken for as_of")
      released = undefined
    }
    const derived = new Set(files.flatMap((f) => (f.table === "drug_era" || f.table === "condition_era" || f.table === "observation_period" ? [f.table] : [])))
    return yield* finishImport(setup, { asOf: asOf ?? released, derived, format: "omop", surveillance, files: files.length, bytes: files.reduce((s, f) => s + f.bytes, 0), started, onSwitched: options.onSwitched })
  })
