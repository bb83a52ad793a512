/**
 * Where an import collects what it reads before anything reaches the service's database: a
 * scratch SQLite file beside it (journal off; deleted at the end, and by the next import if a
 * kill left it behind). Facts arrive in any order (files are read on several threads); every row
 * keeps the file and line it came from, and ids are given in that order at the end, so the same
 * export always gives the same dataset. A resource read more than once (an incremental export
 * beside the one it updates) is kept in its latest version (Versions.ts). Memory holds only what
 * references are resolved against (patient ids, organizations, medications, concepts): the rest is
 * on disk, so memory does not grow with the size of the files. The tables: stagingTables.ts;
 * phase one's patients and organizations: stagedRoster.ts; phase two's facts: stageFact.ts.
 *
 * StagedDataset.ts then turns the staged facts (`facts()`) into the dataset's tables.
 */
import { DataDays } from "./DataDays.ts"
import type { Fact } from "./facts.ts"
import type { Report } from "./Report.ts"
import { ScratchRows } from "./scratchRows.ts"
import { StagedConcepts } from "./StagedConcepts.ts"
import { StagedRoster } from "./stagedRoster.ts"
import { type PhaseTwo, stageFact } from "./stageFact.ts"
import { type Origin, PHASE_TWO_INDEXES, PHASE_TWO_TABLES, type StagedFacts } from "./stagingTables.ts"
import { Versions } from "./Versions.ts"

export type { StagedFacts }

/** The scratch store of one import. */
export class Staging {
  private readonly rows: ScratchRows
  /** Phase one's patients, organizations and vocabulary entries (stagedRoster.ts). */
  readonly roster: StagedRoster
  /** The latest day of phase one's kept records. */
  private phaseOneDay = Number.NEGATIVE_INFINITY
  /** The resources read, for keeping the latest version of each. */
  private readonly versions: Versions
  /** The day of the import. */
  readonly today: number
  /** The days the data holds, for its as_of (DataDays.ts). */
  private readonly days: DataDays
  private readonly phaseTwo: PhaseTwo
  readonly path: string
  private readonly report: Report
  private readonly format: "fhir" | "omop"
  /** A row naming a person the dataset lacks is a problem (`--strict`), not a row left out and counted. */
  readonly strict: boolean

  /**
   * `today`: the day of the import. A date after it (a mistyped year, an ETL's end of time such as
   * 2099-12-31) never becomes the dataset's as_of; such dates are counted. `strict`: a row naming a
   * person the dataset lacks is a problem.
   */
  constructor(path: string, report: Report, format: "fhir" | "omop", today: number, strict = false) {
    this.path = path
    this.report = report
    this.format = format
    this.today = today
    this.days = new DataDays(today)
    this.strict = strict
    this.rows = ScratchRows.create(path)
    this.roster = new StagedRoster(this.rows, report, format, strict, this.days)
    this.versions = new Versions(this.rows.db, report, (values) => this.rows.run("record", values))
    this.phaseTwo = { rows: this.rows, patients: this.roster.patients, concepts: new StagedConcepts(), days: this.days }
  }

  /** Whether the data lies after the day of the import (DataDays.ts): its own dates then say when its present is. */
  get shifted(): boolean {
    return this.days.shifted
  }

  /**
   * A resource read, after its facts (`add`): its type and id, its `meta.lastUpdated` (epoch ms or
   * null) and the latest day its facts hold. Records sharing type and id are resolved when the
   * phase ends (Versions.ts).
   */
  record(origin: Origin, id: string, updated: number | null): void {
    this.versions.add(origin, id, updated, this.days.takeRecordDay())
  }

  /** Phase one: patients, organizations and vocabulary entries (stagedRoster.ts). */
  addPhaseOne(origin: Origin, fact: Fact): void {
    this.roster.add(origin, fact)
  }

  /**
   * Ends phase one: of a resource read more than once its latest version is kept (Versions.ts);
   * patients get their indexes in file order (stagedRoster.ts). Returns whether a record at an
   * origin was superseded (the reader keeps Medications itself).
   */
  closePhaseOne(): (origin: Origin) => boolean {
    const superseded = this.versions.supersede()
    const left = superseded === 0 ? new Set<string>() : this.versions.supersededOrigins()
    const isSuperseded = (origin: Origin) => left.has(`${origin.file}:${origin.line}`)
    if (superseded > 0) this.days.latest = this.versions.latestKept()
    this.phaseOneDay = this.days.latest
    this.roster.close(isSuperseded)
    this.versions.clear()
    this.rows.commit("CREATE INDEX patient_identifier_key ON patient_identifier (key)")
    return isSuperseded
  }

  /** Phase two: one fact of a record (stageFact.ts); a phase-one fact is taken as phase one takes it. */
  add(origin: Origin, fact: Fact): void {
    if (!stageFact(this.phaseTwo, origin, fact)) this.addPhaseOne(origin, fact)
  }

  /** The latest day in the data (as_of unless given), or undefined when there is none (DataDays.present). */
  get latestDay(): number | undefined {
    return this.days.present
  }

  /** Ends the writes: everything is on disk and indexed for the reads of `rows()`. */
  closePhaseTwo(): void {
    const db = this.rows.db
    if (this.versions.supersede() > 0) {
      for (const [table] of PHASE_TWO_TABLES) db.exec(`DELETE FROM ${table} WHERE (f, l) IN (SELECT f, l FROM superseded)`)
      // The latest day of the records kept, with phase one's.
      this.days.latest = Math.max(this.phaseOneDay, this.versions.latestKept())
    }
    this.days.report(this.report)
    db.exec(`COMMIT; ${PHASE_TWO_INDEXES}`)
  }

  /** Deletes the scratch file. */
  close(): void {
    this.rows.remove(this.path)
  }

  /** What the staged facts are, for turning them into the dataset's tables (StagedDataset.ts). */
  facts(): StagedFacts {
    return {
      db: this.rows.db,
      report: this.report,
      format: this.format,
      patients: this.roster.patients.count,
      latestDay: this.latestDay,
      seeds: this.roster.seeds,
      concepts: this.phaseTwo.concepts.list,
      comparedOnly: this.phaseTwo.concepts.comparedOnly,
      organizations: this.roster.organizations.byId,
      organizationOf: (ref) => this.roster.organizations.of(ref)
    }
  }
}
