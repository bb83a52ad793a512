/**
 * What an import found, as it reads: problems (any one stops the import; the first
 * MAX_REPORTED_PROBLEMS listed as `file:line: path: reason`, the rest counted), notes (records left
 * out on purpose, counted by reason), resources read per type. The summary is built from it.
 *
 * A large file is read in parts on several threads; a part knows its lines only from its own
 * start, so a problem's place is kept as (file, part, line in the part) and written out with the
 * file's line once every part before it has said how many lines it had.
 */

/** Problems listed in full before the rest are only counted. */
export const MAX_REPORTED_PROBLEMS = 50

/** Why an import was refused: each problem is `file:line: column: reason`. */
export class ImportRejected extends Error {
  readonly problems: ReadonlyArray<string>
  readonly total: number
  constructor(problems: ReadonlyArray<string>, total: number) {
    const more = total > problems.length ? `\n… and ${total - problems.length} more` : ""
    super(`nothing was imported: ${total} problem${total === 1 ? "" : "s"}\n${problems.join("\n")}${more}`)
    this.problems = problems
    this.total = total
  }
}

/** Where in a file: its name, the part of it read apart (0 for a file read whole), the line within that part (from 1). */
export interface Place {
  readonly name: string
  readonly part: number
  readonly line: number
}

interface Entry {
  readonly where: string | Place
  readonly path: string
  readonly reason: string
}

/** The running record of an import. */
export class Report {
  private readonly entries: Array<Entry> = []
  private readonly partLines = new Map<string, Array<number>>()
  problemCount = 0
  readonly notes = new Map<string, number>()
  /** Records read, by type (a resource type, an OMOP table). */
  readonly read = new Map<string, number>()
  /** Files or records of types the importer does not read, by type. */
  readonly skipped = new Map<string, number>()
  /**
   * Rows left out because they name a person the dataset does not hold, by table and column
   * (`observation_period.person_id`, `Condition.subject`): the Data Quality Dashboard's foreign-key
   * check, reported as a count and a rate rather than a reason to refuse the rest.
   */
  readonly orphans = new Map<string, number>()

  /** One problem, at a place (or a file as a whole). */
  problem(where: string | Place, path: string, reason: string): void {
    this.problemCount++
    if (this.entries.length < MAX_REPORTED_PROBLEMS) this.entries.push({ where, path, reason })
  }

  /** One problem already written as `file:line: path: reason`. */
  problemText(text: string): void {
    this.problem(text, "", "")
  }

  /** How many lines a part of a file had (once it is read). */
  setPartLines(name: string, part: number, lines: number): void {
    const list = this.partLines.get(name) ?? []
    list[part] = lines
    this.partLines.set(name, list)
  }

  /** `file:line` of a place (the line in the whole file). */
  render(where: string | Place): string {
    if (typeof where === "string") return where
    let line = where.line
    const parts = this.partLines.get(where.name) ?? []
    for (let p = 0; p < where.part; p++) line += parts[p] ?? 0
    return `${where.name}:${line}`
  }

  /** The problems listed, as `file:line: path: reason`. */
  get problems(): ReadonlyArray<string> {
    return this.entries.map((e) => [this.render(e.where), e.path, e.reason].filter((x) => x !== "").join(": "))
  }

  /** One more record left out for this reason. */
  note(reason: string, n = 1): void {
    this.notes.set(reason, (this.notes.get(reason) ?? 0) + n)
  }

  /** One more row naming a person the dataset lacks, at a table's column. */
  orphan(column: string, n = 1): void {
    this.orphans.set(column, (this.orphans.get(column) ?? 0) + n)
  }

  /** Counts records read of a type. */
  count(type: string, n = 1): void {
    this.read.set(type, (this.read.get(type) ?? 0) + n)
  }

  /** Counts records skipped of a type the importer does not read. */
  skip(type: string, n = 1): void {
    this.skipped.set(type, (this.skipped.get(type) ?? 0) + n)
  }
}
