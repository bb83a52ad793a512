/**
 * What an import found, as it reads: problems (any one stops the import; the first
 * MAX_REPORTED_PROBLEMS listed as `file:line: path: reason`, the rest counted), notes (records left
 * out on purpose, counted by reason), resources read per type. The summary is built from it.
 */
import { MAX_REPORTED_PROBLEMS } from "../health/csv.ts"

/** The running record of an import. */
export class Report {
  readonly problems: Array<string> = []
  problemCount = 0
  readonly notes = new Map<string, number>()
  /** Records read, by type (a resource type, an OMOP table). */
  readonly read = new Map<string, number>()
  /** Files or records of types the importer does not read, by type. */
  readonly skipped = new Map<string, number>()

  /** One problem, located. */
  problem(where: string, path: string, reason: string): void {
    this.problemCount++
    if (this.problems.length < MAX_REPORTED_PROBLEMS) this.problems.push(`${where}: ${path === "" ? "" : `${path}: `}${reason}`)
  }

  /** One problem already written as `file:line: path: reason`. */
  problemText(text: string): void {
    this.problemCount++
    if (this.problems.length < MAX_REPORTED_PROBLEMS) this.problems.push(text)
  }

  /** One more record left out for this reason. */
  note(reason: string, n = 1): void {
    this.notes.set(reason, (this.notes.get(reason) ?? 0) + n)
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
