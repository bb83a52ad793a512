/**
 * A failure of the engine (DuckDB) to read a file of an OMOP folder, as the import problem of that
 * file: `file: column: cannot be read: reason`. The column, for Parquet (read column by column),
 * is the one DuckDB's message quotes among the file's columns, else the first column that cannot
 * be read alone (looked for only after a failure: a file that reads costs nothing more); none when
 * neither tells, or for CSV (read row by row). The reason is in plain words: a plain phrase for the
 * failures real files show (PLAIN), else DuckDB's first paragraph without its error class and with
 * the file's name for its path — never the SQL it quotes back (Engine.ts leaves that out).
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { type Engine, EngineError, literal } from "../../pipeline/Engine.ts"
import { ImportRejected } from "../../pipeline/Report.ts"
import type { OmopFile } from "./cdmTables.ts"

/** DuckDB's words for a failure real files show, and what they mean. */
const PLAIN: ReadonlyArray<readonly [RegExp, string]> = [
  // A text column holding bytes that are not UTF-8 (Parquet's BYTE_ARRAY strings are UTF-8, Parquet format: LogicalTypes.md STRING; CSV read as UTF-8).
  [/Invalid string encoding|Invalid unicode|not utf-8 encoded/i, "text that is not valid UTF-8"],
  // No footer (a Parquet file ends with its metadata and the magic bytes PAR1): cut short, or another format named .parquet.
  [/too small to be a Parquet file|No magic bytes found|not a parquet file/i, "not a Parquet file (no Parquet footer: cut short, or another format)"]
]

/** The reason of a failure in plain words (see the module comment). */
const plainReason = (file: OmopFile, reason: string): string =>
  PLAIN.find(([words]) => words.test(reason))?.[1] ??
    reason.split(/\n\s*\n/)[0]!.replace(/^[A-Z][A-Za-z ]* Error: /, "").replaceAll(file.path, file.name).replace(/\s+/g, " ").trim()

const quoted = (column: string) => `"${column.replaceAll('"', '""')}"`

/** The column of a Parquet file's failure, when DuckDB's message or a read of each column alone tells it. */
const columnAtFault = (engine: Engine, file: OmopFile, reason: string): Effect.Effect<string | undefined> =>
  Effect.gen(function*() {
    if (file.format !== "parquet") return undefined
    const from = `read_parquet(${literal(file.path)})`
    const described = yield* Effect.exit(engine.rows(file.name, `SELECT column_name FROM (DESCRIBE SELECT * FROM ${from})`))
    if (Exit.isFailure(described)) return undefined
    const columns = described.value.map((r) => r[0]!)
    const named = columns.find((c) => reason.includes(quoted(c)))
    if (named !== undefined) return named
    for (const column of columns) {
      // Every value's text: a count alone would not decode them.
      const read = yield* Effect.exit(engine.run(file.name, `SELECT sum(length(${quoted(column)}::VARCHAR)) FROM ${from}`))
      if (Exit.isFailure(read)) return column
    }
    return undefined
  })

/** Runs a read of `file`; a failure of the engine becomes the file's import problem (see the module comment). */
export const readingFile = (engine: Engine, file: OmopFile) => <A>(read: Effect.Effect<A, Error>): Effect.Effect<A, Error> =>
  read.pipe(Effect.catchIf((e): e is EngineError => e instanceof EngineError, (e) =>
    Effect.flatMap(columnAtFault(engine, file, e.reason), (column) =>
      Effect.fail(new ImportRejected([[file.name, column, `cannot be read: ${plainReason(file, e.reason)}`].filter((x) => x !== undefined).join(": ")], 1)))))
