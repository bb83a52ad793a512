/**
 * The staging file (Staging.ts) and its writes: one prepared INSERT per table, committed every
 * ROWS_PER_COMMIT rows so a large import neither holds one huge transaction nor pays one per row.
 * The file is scratch: no journal, no syncs; a kill leaves it for the next import to remove.
 */
import { rmSync } from "node:fs"
import { DatabaseSync, type StatementSync } from "node:sqlite"
import { type Origin, STAGING_TABLES } from "./stagingTables.ts"

/** Staged rows per transaction of the scratch file. */
const ROWS_PER_COMMIT = 50_000

/** Inserts into the staging file, inside an open transaction (the file is opened with `BEGIN`). */
export class ScratchRows {
  private readonly insert = new Map<string, StatementSync>()
  private pending = 0
  readonly db: DatabaseSync

  constructor(db: DatabaseSync) {
    this.db = db
  }

  /** A new staging file at `path` (one left there is removed), its tables made, a transaction open. */
  static create(path: string): ScratchRows {
    rmSync(path, { force: true })
    const db = new DatabaseSync(path)
    db.exec(`PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA temp_store = FILE; PRAGMA cache_size = -65536;
      ${STAGING_TABLES}
      BEGIN`)
    return new ScratchRows(db)
  }

  /** Closes and deletes the file at `path`. */
  remove(path: string): void {
    if (this.db.isOpen) this.db.close()
    for (const suffix of ["", "-journal", "-wal", "-shm"]) rmSync(path + suffix, { force: true })
  }

  /** Inserts one row into `table`. */
  run(table: string, values: ReadonlyArray<string | number | null>): void {
    let st = this.insert.get(table)
    if (st === undefined) {
      st = this.db.prepare(`INSERT INTO ${table} VALUES (${values.map(() => "?").join(", ")})`)
      this.insert.set(table, st)
    }
    st.run(...values)
    if (++this.pending >= ROWS_PER_COMMIT) this.commit()
  }

  /** Inserts a phase-two fact's row, led by its record's origin. */
  row(table: string, origin: Origin, values: ReadonlyArray<string | number | null>): void {
    this.run(table, [origin.file, origin.line, ...values])
  }

  /** Commits what is written, runs `sql` (indexes) outside a transaction, and begins the next. */
  commit(sql = ""): void {
    this.db.exec(`COMMIT; ${sql}; BEGIN`)
    this.pending = 0
  }
}
