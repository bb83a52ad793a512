/**
 * The vocabulary tables of an OMOP folder, at Athena's size, kept to what the clinical tables use.
 * A full Athena download holds about 7 million CONCEPT rows, 50 million CONCEPT_RELATIONSHIP rows
 * and 80 million CONCEPT_ANCESTOR rows, of which one instance's data uses a few thousand concepts.
 * DuckDB (Engine.ts) scans them off the JavaScript thread, in bounded memory:
 *
 * 1. the concept ids the other tables name: every `…concept_id` column of every other table, and
 *    the concepts of the service's own vocabularies (`HCC <kind>`, written by its OMOP export);
 * 2. CONCEPT_RELATIONSHIP's valid "Maps to" rows from those ids;
 * 3. CONCEPT_ANCESTOR's rows from those ids (ingredients are picked among the ancestors later);
 * 4. CONCEPT's rows of those ids, their "Maps to" targets and their ancestors.
 *
 * Each scan also counts the table's rows (the summary's `read`) and its rows whose id is not an
 * integer: a table with any is read again row by row, so each such row is reported as
 * `file:line: column: reason`. A Parquet column of any type is read (relationOf); a file the
 * engine cannot read is one problem naming it (fileProblem.ts).
 */
import * as Effect from "effect/Effect"
import { type Engine, literal } from "../../pipeline/Engine.ts"
import { numericColumnsOf } from "./cdmLayouts.ts"
import { readingFile } from "./fileProblem.ts"
import { checkReadable, firstLineOf, type OmopFile, type OmopTable } from "./tables.ts"

/** The vocabulary tables. */
export const VOCABULARY_TABLES: ReadonlyArray<OmopTable> = ["concept", "concept_relationship", "concept_ancestor"]

/** Where the kept rows go (OmopVocabulary), and what is counted. */
export interface VocabularySink {
  readonly addConcept: (id: number, vocabulary: string, code: string, name: string, conceptClass: string) => void
  readonly addMapsTo: (source: number, target: number) => void
  readonly addAncestor: (descendant: number, ancestor: number) => void
  /** Rows read of a table. */
  readonly count: (table: OmopTable, rows: number) => void
  /** Rows of a table left out because the data does not use them. */
  readonly leftOut: (table: OmopTable, rows: number) => void
}

/** An SQL identifier. */
const quoted = (name: string): string => `"${name.replaceAll('"', '""')}"`

/** DuckDB's numeric types. */
const NUMERIC_TYPE = /^(U?(TINY|SMALL|BIG|HUGE)?INT(EGER)?|FLOAT|DOUBLE|DECIMAL\b.*)$/

/**
 * A file as a DuckDB relation, and its columns: lower-case name → the name as written (a file
 * without a header row: its CDM version's, textLayout.ts). Every column is text, except a Parquet
 * column the CDM declares a number (cdmLayouts.ts) that the file holds as a number, read as it is:
 * a scan of Athena's CONCEPT_ANCESTOR (80 million rows) then turns no id into text and back. Any
 * other type is read as its text, so a column pandas or Arrow typed BOOLEAN or INTEGER because it
 * holds no value is empty. The SQL over a relation therefore touches a column only through a cast
 * (`::VARCHAR`, `TRY_CAST`), which takes either. A failure to read the file is its import problem
 * (fileProblem.ts).
 */
export const relationOf = (engine: Engine, file: OmopFile): Effect.Effect<{ readonly from: string; readonly columns: ReadonlyMap<string, string> }, Error> =>
  Effect.andThen(checkReadable([file]), () => {
    if (file.format === "parquet") {
      const source = `read_parquet(${literal(file.path)})`
      const numeric = numericColumnsOf(file.table)
      return Effect.map(engine.rows(`${file.name}: not readable as Parquet`, `SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM ${source})`), (rows) => {
        const select = rows.map(([name, type]) =>
          numeric.has(name!.toLowerCase()) && NUMERIC_TYPE.test(type!) ? quoted(name!) : `${quoted(name!)}::VARCHAR AS ${quoted(name!)}`)
        return { from: `(SELECT ${select.join(", ")} FROM ${source})`, columns: new Map(rows.map((r) => [r[0]!.toLowerCase(), r[0]!])) }
      }).pipe(readingFile(engine, file))
    }
    return Effect.sync(() => {
      const first = firstLineOf(file)
      const tab = first.includes("\t")
      const names = file.headerless?.columns ?? first.split(tab ? "\t" : ",").map((c) => c.trim().replace(/^"(.*)"$/, "$1"))
      // Athena's files are tab-separated with no quoting (names hold bare quotes); CSV quotes with ".
      const header = file.headerless === undefined ? "header = true" : `header = false, names = [${names.map(literal).join(", ")}]`
      const from = `read_csv(${literal(file.path)}, ${header}, all_varchar = true, delim = ${literal(tab ? "\t" : ",")}, quote = ${literal(tab ? "" : '"')}, escape = ${literal(tab ? "" : '"')}, null_padding = true, strict_mode = false)`
      return { from, columns: new Map(names.map((n) => [n.toLowerCase(), n])) }
    })
  })

/** A column of a relation by its lower-case name, quoted, or NULL when the file lacks it. */
export const col = (columns: ReadonlyMap<string, string>, name: string): string => {
  const c = columns.get(name)
  return c === undefined ? "NULL" : quoted(c)
}

const id = (expr: string) => `TRY_CAST(${expr} AS BIGINT)`

/** One vocabulary table: the rows kept (as the columns of `keep`), when to keep a row, its id columns (a row with a non-integer one is bad). */
interface TableScan {
  readonly table: OmopTable
  readonly into: string
  readonly ids: ReadonlyArray<string>
  readonly keep: (c: (name: string) => string) => { readonly values: ReadonlyArray<string>; readonly key: string; readonly among: string; readonly where: string }
}

const SCANS: ReadonlyArray<TableScan> = [
  {
    table: "concept_relationship",
    into: "maps_to",
    ids: ["concept_id_1", "concept_id_2"],
    keep: (c) => ({ values: [id(c("concept_id_1")), id(c("concept_id_2"))], key: id(c("concept_id_1")), among: "used", where: `${c("relationship_id")} = 'Maps to' AND coalesce(${c("invalid_reason")}, '') = ''` })
  },
  {
    table: "concept_ancestor",
    into: "ancestors",
    ids: ["descendant_concept_id", "ancestor_concept_id"],
    keep: (c) => ({ values: [id(c("descendant_concept_id")), id(c("ancestor_concept_id"))], key: id(c("descendant_concept_id")), among: "used", where: `${id(c("descendant_concept_id"))} <> ${id(c("ancestor_concept_id"))}` })
  },
  {
    table: "concept",
    into: "concepts",
    ids: ["concept_id"],
    keep: (c) => ({ values: [id(c("concept_id")), c("vocabulary_id"), c("concept_code"), c("concept_name"), c("concept_class_id")], key: id(c("concept_id")), among: "needed", where: "true" })
  }
]

/**
 * Loads the used part of the vocabulary tables into `sink` (see the module comment); `onStep` hears
 * the share done. Returns the tables with rows whose ids are not integers (nothing of them is
 * kept): the caller reads those row by row to report each such row.
 */
export const loadVocabulary = (
  engine: Engine,
  files: ReadonlyArray<OmopFile>,
  sink: VocabularySink,
  onStep: (done: number) => Effect.Effect<void>
): Effect.Effect<ReadonlyArray<OmopTable>, Error> =>
  Effect.gen(function*() {
    // Every file that cannot be read at all, listed at once before any is read.
    yield* checkReadable(files)
    const bad = new Set<OmopTable>()
    // 1. The concept ids the other tables name: one scan per file, of all its concept id columns.
    yield* engine.run("the concept ids the tables name", `CREATE OR REPLACE TEMP TABLE named (id BIGINT);
      CREATE OR REPLACE TEMP TABLE maps_to (source BIGINT, target BIGINT);
      CREATE OR REPLACE TEMP TABLE ancestors (descendant BIGINT, ancestor BIGINT);
      CREATE OR REPLACE TEMP TABLE concepts (id BIGINT, vocabulary VARCHAR, code VARCHAR, name VARCHAR, class VARCHAR)`)
    for (const file of files) {
      if (file.table === "concept") {
        // The service's own vocabularies (an export of ours) are kept whole, used or not.
        const { columns, from } = yield* relationOf(engine, file)
        if (!columns.has("vocabulary_id")) continue
        yield* engine.run(`${file.name}: not readable`, `INSERT INTO named SELECT ${id(col(columns, "concept_id"))} FROM ${from} WHERE ${col(columns, "vocabulary_id")} LIKE 'HCC %' AND ${id(col(columns, "concept_id"))} IS NOT NULL`)
          .pipe(readingFile(engine, file))
        continue
      }
      if (VOCABULARY_TABLES.includes(file.table)) continue
      const { columns, from } = yield* relationOf(engine, file)
      const named = [...columns.keys()].filter((name) => name.endsWith("concept_id")).map((name) => id(col(columns, name)))
      if (named.length === 0) continue
      yield* engine.run(`${file.name}: not readable`, `INSERT INTO named SELECT DISTINCT id FROM (SELECT unnest([${named.join(", ")}]) AS id FROM ${from}) WHERE id IS NOT NULL AND id <> 0`)
        .pipe(readingFile(engine, file))
    }
    yield* engine.run("the concept ids the tables name", "CREATE OR REPLACE TEMP TABLE used AS SELECT DISTINCT id FROM named")
    yield* onStep(0.1)

    // 2–4. Each table in one scan: its row count, its rows with a bad id, the rows kept (a list, as few as the data uses).
    for (const [step, scan] of SCANS.entries()) {
      if (scan.table === "concept") {
        yield* engine.run("the concepts used", "CREATE OR REPLACE TEMP TABLE needed AS SELECT id FROM used UNION SELECT target FROM maps_to UNION SELECT ancestor FROM ancestors")
      }
      for (const file of files.filter((f) => f.table === scan.table)) {
        const { columns, from } = yield* relationOf(engine, file)
        const k = scan.keep((name) => `t.${col(columns, name)}`)
        const badIds = scan.ids.map((c) => `(t.${col(columns, c)} IS NOT NULL AND ${id(`t.${col(columns, c)}`)} IS NULL)`).join(" OR ")
        const [counts] = yield* engine.rows(`${file.name}: not readable`, `CREATE OR REPLACE TEMP TABLE scanned AS
          SELECT count(*) AS n, count(*) FILTER (WHERE ${badIds}) AS bad, list([${k.values.map((v) => `${v}::VARCHAR`).join(", ")}]) FILTER (WHERE k.id IS NOT NULL AND ${k.where}) AS kept
          FROM ${from} AS t LEFT JOIN ${k.among} AS k ON k.id = ${k.key};
          SELECT n, bad, len(coalesce(kept, [])) FROM scanned`).pipe(readingFile(engine, file))
        sink.count(scan.table, Number(counts![0]))
        if (Number(counts![1]) > 0) {
          bad.add(scan.table)
          continue
        }
        sink.leftOut(scan.table, Number(counts![0]) - Number(counts![2]))
        yield* engine.run(`${file.name}: kept rows`, `INSERT INTO ${scan.into} SELECT ${k.values.map((_, i) => `TRY_CAST(r[${i + 1}] AS ${i === 0 || (scan.into !== "concepts" && i === 1) ? "BIGINT" : "VARCHAR"})`).join(", ")} FROM (SELECT unnest(coalesce(kept, [])) AS r FROM scanned)`)
      }
      yield* onStep(0.1 + 0.25 * (step + 1))
    }

    // The rows kept, to the sink.
    const rowsOf = (sql: string, onRow: (r: ReadonlyArray<string>) => void) => engine.stream("the vocabulary kept", sql, (_, rows) => Effect.sync(() => rows.forEach(onRow)))
    yield* rowsOf("SELECT DISTINCT source, target FROM maps_to", (r) => sink.addMapsTo(Number(r[0]), Number(r[1])))
    yield* rowsOf("SELECT DISTINCT descendant, ancestor FROM ancestors", (r) => sink.addAncestor(Number(r[0]), Number(r[1])))
    yield* rowsOf("SELECT id, vocabulary, code, name, class FROM concepts", (r) => sink.addConcept(Number(r[0]), r[1]!, r[2]!, r[3]!, r[4]!))
    yield* onStep(1)
    return [...bad]
  })
