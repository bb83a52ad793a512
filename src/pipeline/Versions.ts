/**
 * A resource read more than once — an incremental export (`_since`) imported beside the export it
 * updates, or one export given twice — counts once, in its latest version. Every record read is
 * noted in the staging file (`record`: its type and id, `meta.lastUpdated`, its origin and the
 * latest day of its facts); when a phase ends, the records sharing type and id are resolved, and
 * the origins of the versions left out go to `superseded`, whose facts the staging file then
 * takes out. FHIR R4 changes `meta.lastUpdated` whenever a resource changes (Resource.meta), so:
 * the latest version is kept; versions with one instant are one version read twice, kept once (the
 * first in file order); when a version lacks it, which is current cannot be told — a problem
 * naming both places.
 */
import type { DatabaseSync } from "node:sqlite"
import type { Place, Report } from "./Report.ts"
import type { Origin } from "./stagingTables.ts"

interface RecordRow {
  readonly key: string
  readonly updated: number | null
  readonly f: number
  readonly l: number
}

/** The records of one import's staging file. */
export class Versions {
  private readonly db: DatabaseSync
  private readonly report: Report
  private readonly insert: (values: ReadonlyArray<string | number | null>) => void
  /** The file name and part of each part read (by Origin.file), for naming the places of records. */
  private readonly parts = new Map<number, { readonly name: string; readonly part: number }>()

  /** `insert` adds a `record` row through the staging file's batched writes. */
  constructor(db: DatabaseSync, report: Report, insert: (values: ReadonlyArray<string | number | null>) => void) {
    this.db = db
    this.report = report
    this.insert = insert
  }

  /** A record read: its origin, id, `meta.lastUpdated` (epoch ms or null) and the latest day of its facts (or null). */
  add(origin: Origin, id: string, updated: number | null, day: number | null): void {
    if (!this.parts.has(origin.file)) this.parts.set(origin.file, { name: origin.place.name, part: origin.place.part })
    this.insert([`${origin.type}/${id}`, updated, origin.file, origin.line, day])
  }

  private placeOf(f: number, l: number): Place {
    const part = this.parts.get(f)
    return { name: part?.name ?? "", part: part?.part ?? 0, line: l }
  }

  /**
   * Resolves the records read more than once (module comment): the versions left out go to
   * `superseded`, each counted; versions that cannot be told apart are problems. Returns how many
   * records were left out.
   */
  supersede(): number {
    const take = this.db.prepare("INSERT INTO superseded VALUES (?, ?)")
    let superseded = 0
    let group: Array<RecordRow> = []
    const settle = () => {
      if (group.length === 0) return
      const first = group[0]!
      const slash = first.key.indexOf("/")
      const type = first.key.slice(0, slash)
      if (group.some((r) => r.updated === null)) {
        const where = this.report.render(this.placeOf(first.f, first.l))
        for (const r of group.slice(1)) {
          this.report.problem(this.placeOf(r.f, r.l), `${type}.id`, `'${first.key.slice(slash + 1)}' is also the id of the ${type} at ${where}; without meta.lastUpdated on each version, which one is current cannot be told`)
        }
      } else {
        const latest = Math.max(...group.map((r) => r.updated!))
        const kept = group.find((r) => r.updated === latest)!
        for (const r of group) {
          if (r === kept) continue
          take.run(r.f, r.l)
          superseded++
          this.report.note(r.updated === latest
            ? `${type} read twice in one version (the same meta.lastUpdated): kept once`
            : `${type} in an older version than another read (an earlier meta.lastUpdated): the older left out`)
        }
      }
      group = []
    }
    // Only the keys read more than once are sorted (a grouping pass over the rest).
    const duplicates = this.db.prepare(`SELECT key, updated, f, l FROM record
      WHERE key IN (SELECT key FROM record GROUP BY key HAVING count(*) > 1) ORDER BY key, f, l`)
    for (const r of duplicates.iterate() as Iterable<RecordRow>) {
      if (group.length > 0 && group[0]!.key !== r.key) settle()
      group.push(r)
    }
    settle()
    return superseded
  }

  /** The origins (`file:line`) of the versions left out, for a phase whose facts are held in memory. */
  supersededOrigins(): Set<string> {
    return new Set((this.db.prepare("SELECT f, l FROM superseded").all() as Array<{ readonly f: number; readonly l: number }>).map((r) => `${r.f}:${r.l}`))
  }

  /** The latest day of the records kept (after `supersede`), or −∞. */
  latestKept(): number {
    const row = this.db.prepare("SELECT max(day) AS day FROM record r WHERE NOT EXISTS (SELECT 1 FROM superseded s WHERE s.f = r.f AND s.l = r.l)").get() as { readonly day: number | null }
    return row.day ?? Number.NEGATIVE_INFINITY
  }

  /** Forgets the records of a phase once resolved (the next phase's are resolved apart). */
  clear(): void {
    this.db.exec("DELETE FROM record; DELETE FROM superseded")
  }
}
