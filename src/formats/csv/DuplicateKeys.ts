/**
 * The keys of tables whose rows do not come in key order, on disk: a scratch SQLite file beside the
 * dataset (journal off, deleted at the end and by the next import if a kill left it), one row per
 * key in a table keyed by it, so finding a repeated key costs an index probe and no memory.
 */
import { DatabaseSync, type StatementSync } from "node:sqlite"
import { rmSync } from "node:fs"

/** Keys per transaction of the scratch file. */
const KEYS_PER_COMMIT = 50_000

/** The scratch store of keys (see the module comment). */
export class DuplicateKeys {
  private readonly db: DatabaseSync
  private readonly insert: StatementSync
  private pending = 0
  readonly path: string

  constructor(path: string) {
    this.path = path
    rmSync(path, { force: true })
    this.db = new DatabaseSync(path)
    this.db.exec(`PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;
      CREATE TABLE key (t TEXT NOT NULL, k TEXT NOT NULL, PRIMARY KEY (t, k)) WITHOUT ROWID;
      BEGIN`)
    this.insert = this.db.prepare("INSERT OR IGNORE INTO key VALUES (?, ?)")
  }

  /** Adds a table's key; false when it was there already. */
  add(table: string, key: ReadonlyArray<string | number | null>): boolean {
    const added = this.insert.run(table, JSON.stringify(key)).changes === 1
    if (++this.pending >= KEYS_PER_COMMIT) {
      this.db.exec("COMMIT; BEGIN")
      this.pending = 0
    }
    return added
  }

  /** Deletes the scratch file. */
  dispose(): void {
    if (this.db.isOpen) this.db.close()
    for (const suffix of ["", "-journal", "-wal", "-shm"]) rmSync(this.path + suffix, { force: true })
  }
}
