/**
 * The days an import's data holds, for its as_of (docs/data.md, "Dates are judged against the
 * data"): the latest day not after the day of the import, with the later ones counted (an ETL's end
 * of time such as 2099-12-31, a mistyped year) — unless the data as a whole lies after that day, as
 * a research database's does when de-identification shifted its dates a century or two ahead; then
 * its own latest event is its present.
 */
import type { Report } from "./Report.ts"

/** The running tally of an import's days. */
export class DataDays {
  /** The day of the import. */
  readonly today: number
  /** The latest day not after today, and how many days were after it. */
  latest = Number.NEGATIVE_INFINITY
  private future = 0
  /** Event days (see `seen`), those after today, and the latest of them. */
  private events = 0
  private futureEvents = 0
  private latestEvent = Number.NEGATIVE_INFINITY
  /** The latest day (not after today) of the record being read, until `takeRecordDay`. */
  private recordDay = Number.NEGATIVE_INFINITY

  constructor(today: number) {
    this.today = today
  }

  /**
   * A day the data holds. `event`: the day something happened (a start, a diagnosis, a death), as
   * opposed to an end, where an ETL's end of time lives; events say whether the data lies after
   * the day of the import (`shifted`).
   */
  seen(day: number | null, event = true): void {
    if (day === null) return
    if (event) this.event(day)
    if (day > this.today) {
      this.future++
      return
    }
    if (day > this.recordDay) this.recordDay = day
    if (day > this.latest) this.latest = day
  }

  /** An event's day, for `shifted` alone (its record's days are `seen`). */
  event(day: number): void {
    this.events++
    if (day > this.today) this.futureEvents++
    if (day > this.latestEvent) this.latestEvent = day
  }

  /** The latest day of the record just read (null when none), starting the next record's afresh. */
  takeRecordDay(): number | null {
    const day = Number.isFinite(this.recordDay) ? this.recordDay : null
    this.recordDay = Number.NEGATIVE_INFINITY
    return day
  }

  /** Whether more than half of the data's event days lie after the day of the import. */
  get shifted(): boolean {
    return this.futureEvents * 2 > this.events
  }

  /** The data's present: its latest day not after today, or, when `shifted`, its latest event; undefined without any. */
  get present(): number | undefined {
    const day = this.shifted ? this.latestEvent : this.latest
    return Number.isFinite(day) ? day : undefined
  }

  /** Counts, in the summary, the days not taken for as_of (or that the data is shifted). */
  report(report: Report): void {
    if (this.shifted) report.note("event dates after the day of the import (the dataset's dates are shifted, as de-identification does): as_of from the data's own latest event", this.futureEvents)
    else if (this.future > 0) report.note("dates after the day of the import (an end of time such as 2099-12-31, a mistyped year): not taken for as_of", this.future)
  }
}
