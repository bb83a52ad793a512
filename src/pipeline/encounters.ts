/** The encounters of an import, from its staged visits (docs/data.md: the encounter-class rules; "Death ends everything"). */
import { formatDate } from "../health/calendar.ts"
import type { Chunk } from "../health/DatasetWriter.ts"
import type { Row, Rows } from "../health/healthTables.ts"
import { ROWS_PER_CHUNK } from "./courses.ts"
import type { StagedFacts } from "./Staging.ts"

/**
 * Encounters of a mapped class, in file order (another class is left out, counted by its code): a
 * stay still going on (no end) lasts to as_of; a visit starting after the patient's death (`deaths`:
 * patient → day) is left out, one running past it ends there, each counted. An end before the start
 * was counted where it was read and is the start here.
 */
export function* encountersOf(s: StagedFacts, asOfDay: number, deaths: ReadonlyMap<number, number>, emit: (rows: Rows) => Chunk): Generator<Chunk> {
  let batch: Array<Row> = []
  let sources: Array<Row> = []
  let id = 0
  for (const r of s.db.prepare("SELECT src, type, patient, kind, cls, start, finish FROM encounter ORDER BY f, l").iterate() as Iterable<Record<string, number | string | null>>) {
    if (r.kind === null) {
      s.report.note(`${String(r.type)} of class ${String(r.cls)}: not a visit the analytics count, left out`)
      continue
    }
    const start = Number(r.start)
    let end = r.finish === null ? Math.max(start, asOfDay) : Math.max(start, Number(r.finish))
    const death = deaths.get(Number(r.patient))
    if (death !== undefined && start > death) {
      s.report.note(`${String(r.type)} starting after the patient's death: left out`)
      continue
    }
    if (death !== undefined && end > death) {
      s.report.note(`${String(r.type)} running past the patient's death: ended at the death`)
      end = death
    }
    id++
    batch.push([id, Number(r.patient) + 1, r.kind!, formatDate(start), formatDate(end)])
    sources.push(["encounters", String(id), `${String(r.type)}/${String(r.src)}`])
    if (batch.length >= ROWS_PER_CHUNK) {
      yield emit({ encounters: batch, source_ids: sources })
      batch = []
      sources = []
    }
  }
  yield emit({ encounters: batch, source_ids: sources })
}
