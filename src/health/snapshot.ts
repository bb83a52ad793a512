/**
 * The loaded dataset's columns in one binary file beside the database (`$HCC_DATA_DIR/dataset.snapshot`),
 * so a restart reads them at disk speed instead of stepping through millions of SQL rows
 * (docs/benchmarks.md has both times).
 *
 * A snapshot belongs to one version of the dataset: it carries the database's `dataset_stamp`,
 * which every replacement of the dataset renews (DatasetWriter, the only writer of the health
 * tables), and is used only while the stamp in the database is the same. It is written after a load
 * from SQL, in the background, to a temporary file that is synced and then renamed over the old one,
 * so a reader sees a whole file or none. A file that does not match (other stamp, other format,
 * wrong size, unreadable) is ignored with a log line, the dataset is read from SQL, and the file is
 * written again.
 *
 * Layout: 8 bytes "HCCSNAP1", a u32 (little-endian) byte length, the header (JSON: format, stamp,
 * the dataset's small fields, the list of arrays), then each array's bytes, every one starting on a
 * 64-byte boundary. Reads and writes go through the thread pool in pieces of {@link PIECE_BYTES},
 * so the event loop stays free meanwhile.
 */
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"
import { mkdir, open, rename, rm, stat } from "node:fs/promises"
import type { FileHandle } from "node:fs/promises"
import { randomUUID } from "node:crypto"
import { basename, dirname, join } from "node:path"
import type { Arena } from "../kernels/Arena.ts"
import type { KernelsService } from "../kernels/Kernels.ts"
import type { Column } from "../kernels/types.ts"
import type { Dataset } from "./HealthData.ts"
import { heldAs, type ScoreStorage } from "./panelStorage.ts"

/** The file's name in the data folder. */
export const SNAPSHOT_FILE = "dataset.snapshot"
/**
 * Version of the layout and of what the loader puts in the columns: a file of another version is
 * not read. Bump it whenever `loadDataset` changes what it computes (a new column, another rule).
 */
export const SNAPSHOT_FORMAT = 3

const MAGIC = "HCCSNAP1"
const ALIGN = 64
/** Bytes per read or write call. */
const PIECE_BYTES = 32 * 1024 * 1024

type ArrayKind = "i32" | "f64" | "f32" | "u8"
type NumberArray = Int32Array | Float64Array | Float32Array | Uint8Array

/** Where a column goes when read: the panel and the resident columns into the core's memory, the rest on shared memory. */
type Placement = "panel" | "resident" | "shared"

interface Entry {
  readonly name: string
  readonly kind: ArrayKind
  readonly length: number
}

interface Header {
  readonly format: number
  readonly stamp: string
  readonly dataset: {
    readonly asOf: string
    readonly asOfDay: number
    readonly firstMonth: number
    readonly months: number
    readonly vocabulary: Dataset["vocabulary"]
    readonly vocabularyDetails: Dataset["vocabularyDetails"]
    readonly axisCoverage: Dataset["axisCoverage"]
    readonly info: Dataset["info"]
    readonly patients: number
    readonly panel: { readonly nAxes: number }
    readonly conditions: ReadonlyArray<string>
    readonly drugs: ReadonlyArray<string>
    readonly studyIds: ReadonlyArray<string>
    readonly firstWeek: number
    readonly weeks: number
    readonly animal: ReadonlyArray<string>
    readonly human: ReadonlyArray<string>
  }
  readonly arrays: ReadonlyArray<Entry>
}

const kindOf = (a: NumberArray): ArrayKind => (a instanceof Int32Array ? "i32" : a instanceof Float64Array ? "f64" : a instanceof Uint8Array ? "u8" : "f32")
/** The typed array of each kind. */
const CTOR: Record<ArrayKind, { readonly BYTES_PER_ELEMENT: number; new(buffer: ArrayBufferLike, offset: number, length: number): NumberArray }> = {
  i32: Int32Array,
  f64: Float64Array,
  f32: Float32Array,
  u8: Uint8Array
}
const padded = (bytes: number) => Math.ceil(bytes / ALIGN) * ALIGN

/** Every array of a dataset, named, in file order. */
const arraysOf = (d: Dataset): ReadonlyArray<readonly [string, NumberArray]> => [
  ["patients.ids", d.patients.ids],
  ["patients.birthYear", d.patients.birthYear.data],
  ["patients.sex", d.patients.sex.data],
  ["patients.region", d.patients.region.data],
  ["patients.deathDay", d.patients.deathDay],
  ...[...d.patients.conditions].map(([code, c]) => [`condition:${code}`, c.data] as const),
  ...[...d.patients.drugs].map(([code, c]) => [`drug:${code}`, c.data] as const),
  ["panel", d.panel.data],
  ...Object.entries(d.exposures).map(([k, a]) => [`exposures.${k}`, a] as const),
  ...Object.entries(d.adverseEvents).map(([k, a]) => [`adverseEvents.${k}`, a] as const),
  ...Object.entries(d.encounters).map(([k, a]) => [`encounters.${k}`, a] as const),
  ["devices.studies.device", d.devices.studies.device],
  ["devices.studies.region", d.devices.studies.region],
  ...Object.entries(d.devices.implants).map(([k, a]) => [`devices.implants.${k}`, a] as const),
  ...Object.entries(d.devices.outcomes).map(([k, a]) => [`devices.outcomes.${k}`, a] as const),
  ...[...d.surveillance.animal].map(([key, a]) => [`animal:${key}`, a] as const),
  ...[...d.surveillance.human].map(([key, a]) => [`human:${key}`, a] as const)
]

/** Where a reader puts an array of {@link arraysOf} (a name it does not know is found missing when the dataset is assembled). */
const placementOf = (name: string): Placement =>
  name === "panel" ? "panel" : /^(patients\.(birthYear|sex|region)$|condition:|drug:)/.test(name) ? "resident" : "shared"

const bytesOf = (a: NumberArray) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength)

/** The stamp of the dataset in the database (renewed by every replacement), or undefined when it has none. */
export const datasetStamp = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql`SELECT id FROM dataset_stamp`.values
  return rows.length === 1 ? String(rows[0]![0]) : undefined
})

const io = <A>(what: string, f: () => Promise<A>) => Effect.tryPromise({ try: f, catch: (e) => new Error(`${what}: ${e instanceof Error ? e.message : String(e)}`) })

/** Reads exactly `target.length` bytes at `position`, a piece at a time. */
const readFully = (fh: FileHandle, target: Uint8Array, position: number) =>
  Effect.gen(function*() {
    for (let done = 0; done < target.length;) {
      const n = Math.min(PIECE_BYTES, target.length - done)
      const { bytesRead } = yield* io("read", () => fh.read(target, done, n, position + done))
      if (bytesRead === 0) return yield* Effect.fail(new Error("the file ends early"))
      done += bytesRead
    }
  })

/** Writes all of `source` at `position`, a piece at a time. */
const writeFully = (fh: FileHandle, source: Uint8Array, position: number) =>
  Effect.gen(function*() {
    for (let done = 0; done < source.length;) {
      const n = Math.min(PIECE_BYTES, source.length - done)
      const { bytesWritten } = yield* io("write", () => fh.write(source, done, n, position + done))
      done += bytesWritten
    }
  })

/**
 * Writes the dataset's snapshot to `path` for `stamp`: to a temporary file beside it, synced, then
 * renamed over `path`. Fails with the reason (the caller logs it); leaves no temporary file.
 */
export const writeSnapshot = (path: string, stamp: string, d: Dataset) =>
  Effect.gen(function*() {
    const arrays = arraysOf(d)
    const header: Header = {
      format: SNAPSHOT_FORMAT,
      stamp,
      dataset: {
        asOf: d.asOf,
        asOfDay: d.asOfDay,
        firstMonth: d.firstMonth,
        months: d.months,
        vocabulary: d.vocabulary,
        vocabularyDetails: d.vocabularyDetails,
        axisCoverage: d.axisCoverage,
        info: d.info,
        patients: d.patients.count,
        panel: { nAxes: d.panel.nAxes },
        conditions: [...d.patients.conditions.keys()],
        drugs: [...d.patients.drugs.keys()],
        studyIds: d.devices.studies.ids,
        firstWeek: d.surveillance.firstWeek,
        weeks: d.surveillance.weeks,
        animal: [...d.surveillance.animal.keys()],
        human: [...d.surveillance.human.keys()]
      },
      arrays: arrays.map(([name, a]) => ({ name, kind: kindOf(a), length: a.length }))
    }
    const json = new TextEncoder().encode(JSON.stringify(header))
    const head = new Uint8Array(padded(12 + json.length))
    head.set(new TextEncoder().encode(MAGIC), 0)
    new DataView(head.buffer).setUint32(8, json.length, true)
    head.set(json, 12)
    const temporary = join(dirname(path), `.${basename(path)}.${process.pid}.${randomUUID().slice(0, 8)}.tmp`)
    yield* io("mkdir", () => mkdir(dirname(path), { recursive: true, mode: 0o700 }))
    const write = Effect.acquireUseRelease(
      io("open", () => open(temporary, "w", 0o600)),
      (fh) =>
        Effect.gen(function*() {
          yield* writeFully(fh, head, 0)
          let position = head.length
          for (const [, a] of arrays) {
            yield* writeFully(fh, bytesOf(a), position)
            position += padded(a.byteLength)
          }
          // The last array's padding: the file's size is part of what a reader checks.
          yield* io("truncate", () => fh.truncate(position))
          yield* io("sync", () => fh.sync())
          return position
        }),
      (fh) => Effect.promise(() => fh.close())
    )
    const bytes = yield* write.pipe(
      Effect.andThen((size) => Effect.as(io("rename", () => rename(temporary, path)), size)),
      Effect.onExit(() => Effect.promise(() => rm(temporary, { force: true })))
    )
    return { bytes }
  })

/** Removes the snapshot in `dataDir` (after `hcc data generate` or `import`: it can no longer be used). */
export const removeSnapshot = (dataDir: string) => Effect.ignore(io("rm", () => rm(join(dataDir, SNAPSHOT_FILE), { force: true })))

/** The file at `path` read for `stamp`; `{ skipped }` says why it was not used (none, other stamp, damaged…). */
export type SnapshotRead = { readonly dataset: Dataset } | { readonly skipped: string }

/**
 * Reads the snapshot at `path` if it is one of `stamp`'s dataset: the panel into the core's memory
 * (in place when an arena is given), the scanned columns made resident through `kernels`, the other
 * big columns on shared memory. `report` hears the share read.
 */
export const readSnapshot = (path: string, stamp: string, kernels: KernelsService, arena?: Arena, report: (done: number) => void = () => {}, storage: ScoreStorage = "compact") =>
  Effect.gen(function*() {
    const size = yield* Effect.option(io("stat", () => stat(path)))
    if (size._tag === "None") return { skipped: "no snapshot" } satisfies SnapshotRead as SnapshotRead
    return yield* Effect.acquireUseRelease(
      io("open", () => open(path, "r")),
      (fh) => readOpen(fh, size.value.size, stamp, kernels, arena, report, storage),
      (fh) => Effect.promise(() => fh.close())
    ).pipe(Effect.catch((e: Error) => Effect.succeed<SnapshotRead>({ skipped: e.message })))
  })

/** A snapshot's header, checked against the file's size and the database's dataset stamp; where its arrays start, and the size it describes. */
const readHeader = (fh: FileHandle, fileSize: number, stamp: string) =>
  Effect.gen(function*() {
    const fail = (reason: string) => Effect.fail(new Error(reason))
    const start = new Uint8Array(12)
    if (fileSize < 12) return yield* fail("not a snapshot (too short)")
    yield* readFully(fh, start, 0)
    if (new TextDecoder().decode(start.subarray(0, 8)) !== MAGIC) return yield* fail("not a snapshot (no HCCSNAP1 mark)")
    const jsonLength = new DataView(start.buffer).getUint32(8, true)
    if (12 + jsonLength > fileSize) return yield* fail("damaged (the header runs past the end)")
    const json = new Uint8Array(jsonLength)
    yield* readFully(fh, json, 12)
    const header = yield* Effect.try({ try: () => JSON.parse(new TextDecoder().decode(json)) as Header, catch: () => new Error("damaged (its header is not JSON)") })
    if (header.format !== SNAPSHOT_FORMAT) return yield* fail(`written in format ${header.format}, this version reads ${SNAPSHOT_FORMAT}`)
    if (header.stamp !== stamp) return yield* fail("of another dataset (the database's dataset was replaced since)")
    const arraysStart = padded(12 + jsonLength)
    const total = header.arrays.reduce((s, e) => s + padded(e.length * CTOR[e.kind].BYTES_PER_ELEMENT), arraysStart)
    if (total !== fileSize) return yield* fail(`damaged (${fileSize} bytes, its header describes ${total})`)
    return { header, start: arraysStart, total }
  })

const readOpen = (fh: FileHandle, fileSize: number, stamp: string, kernels: KernelsService, arena: Arena | undefined, report: (done: number) => void, storage: ScoreStorage) =>
  Effect.gen(function*() {
    const fail = (reason: string) => Effect.fail(new Error(reason))
    const { header, start, total } = yield* readHeader(fh, fileSize, stamp)
    let position = start

    const m = header.dataset
    const panelLength = m.panel.nAxes * m.patients * m.months
    const arrays = new Map<string, NumberArray>()
    let inPlace: { readonly ptr: number; readonly view: Float32Array | Uint8Array } | undefined
    // Resident columns are read straight into the core's memory (no copy after: a synchronous
    // copy of hundreds of MB at ten million patients would hold the event loop).
    const inCore = new Map<string, number>()
    for (const entry of header.arrays) {
      const place = placementOf(entry.name)
      let target: NumberArray
      if (place === "panel") {
        if ((entry.kind !== "f32" && entry.kind !== "u8") || entry.length !== panelLength) return yield* fail("damaged (the panel's size does not match)")
        // Read where it stays when held as this start asks; otherwise converted below (widened, or
        // put in tenths when every score allows: the operator changed HCC_SCORES since it was written).
        const keep = (entry.kind === "u8") === (storage === "compact")
        inPlace = !keep || arena === undefined ? undefined : entry.kind === "u8" ? arena.residentBuffer(Uint8Array, entry.length) : arena.residentBuffer(Float32Array, entry.length)
        target = inPlace?.view ?? (entry.kind === "u8" ? new Uint8Array(entry.length) : new Float32Array(entry.length))
      } else if (place === "resident" && arena !== undefined) {
        const { ptr, view } = arena.residentBuffer(CTOR[entry.kind], entry.length)
        inCore.set(entry.name, ptr)
        target = view
      } else {
        target = new CTOR[entry.kind](new SharedArrayBuffer(entry.length * CTOR[entry.kind].BYTES_PER_ELEMENT), 0, entry.length)
      }
      yield* readFully(fh, bytesOf(target), position)
      position += padded(target.byteLength)
      report(position / total)
      arrays.set(entry.name, target)
    }
    const get = <A extends NumberArray>(name: string, Ctor: abstract new(...args: never) => A): Effect.Effect<A, Error> => {
      const a = arrays.get(name)
      return a instanceof Ctor ? Effect.succeed(a) : fail(`damaged (${name} is missing or of another type)`)
    }
    const i32 = (name: string) => get(name, Int32Array)
    const f64 = (name: string) => get(name, Float64Array)
    const f32 = (name: string) => get(name, Float32Array)
    const u8 = (name: string) => get(name, Uint8Array)
    /** A resident column: in place when it was read into the core, otherwise copied there by the kernels. */
    const resident = <A extends Int32Array | Uint8Array | Float64Array>(a: A, name: string, copy: (a: A) => Effect.Effect<Column<A>, { readonly reason: string }>) => {
      const ptr = inCore.get(name)
      return ptr !== undefined ? Effect.succeed({ data: a, ptr }) : Effect.mapError(copy(a), (e) => new Error(e.reason))
    }
    const residentI32 = (name: string) => Effect.flatMap(i32(name), (a) => resident(a, name, kernels.columnI32))
    const residentU8 = (name: string) => Effect.flatMap(u8(name), (a) => resident(a, name, kernels.columnU8))
    const residentMap = (prefix: string, codes: ReadonlyArray<string>) =>
      Effect.map(Effect.forEach(codes, (code) => Effect.map(residentU8(`${prefix}:${code}`), (c) => [code, c] as const)), (e) => new Map(e))
    const series = (prefix: string, keys: ReadonlyArray<string>) =>
      Effect.map(Effect.forEach(keys, (key) => Effect.map(f64(`${prefix}:${key}`), (a) => [key, a] as const)), (e) => new Map(e))
    const read = arrays.get("panel")
    if (!(read instanceof Float32Array || read instanceof Uint8Array)) return yield* fail("damaged (panel is missing or of another type)")
    const panelData = inPlace !== undefined ? read : heldAs(read, storage)
    const dataset: Dataset = {
      id: header.stamp,
      asOf: m.asOf,
      asOfDay: m.asOfDay,
      firstMonth: m.firstMonth,
      months: m.months,
      vocabulary: m.vocabulary,
      vocabularyDetails: m.vocabularyDetails,
      axisCoverage: m.axisCoverage,
      info: m.info,
      patients: {
        count: m.patients,
        ids: yield* i32("patients.ids"),
        birthYear: yield* Effect.flatMap(f64("patients.birthYear"), (a) => resident(a, "patients.birthYear", kernels.columnF64)),
        sex: yield* residentI32("patients.sex"),
        deathDay: yield* f32("patients.deathDay"),
        region: yield* residentI32("patients.region"),
        conditions: yield* residentMap("condition", m.conditions),
        drugs: yield* residentMap("drug", m.drugs)
      },
      panel: inPlace === undefined
        ? yield* Effect.mapError(kernels.panel(panelData, m.patients, m.panel.nAxes, m.months), (e) => new Error(e.reason))
        : { data: inPlace.view, ptr: inPlace.ptr, nPatients: m.patients, nAxes: m.panel.nAxes, nMonths: m.months },
      exposures: {
        patient: yield* i32("exposures.patient"),
        drug: yield* i32("exposures.drug"),
        startDay: yield* f32("exposures.startDay"),
        endDay: yield* f32("exposures.endDay"),
        adherence: yield* f64("exposures.adherence")
      },
      adverseEvents: {
        patient: yield* i32("adverseEvents.patient"),
        drug: yield* i32("adverseEvents.drug"),
        eventType: yield* i32("adverseEvents.eventType"),
        day: yield* f32("adverseEvents.day")
      },
      encounters: {
        patient: yield* i32("encounters.patient"),
        kind: yield* u8("encounters.kind"),
        startDay: yield* f32("encounters.startDay"),
        endDay: yield* f32("encounters.endDay")
      },
      devices: {
        studies: { ids: m.studyIds, device: yield* i32("devices.studies.device"), region: yield* i32("devices.studies.region") },
        implants: {
          patient: yield* i32("devices.implants.patient"),
          device: yield* i32("devices.implants.device"),
          study: yield* i32("devices.implants.study"),
          day: yield* f32("devices.implants.day")
        },
        outcomes: { implant: yield* i32("devices.outcomes.implant"), metric: yield* i32("devices.outcomes.metric"), value: yield* f64("devices.outcomes.value") }
      },
      surveillance: { firstWeek: m.firstWeek, weeks: m.weeks, animal: yield* series("animal", m.animal), human: yield* series("human", m.human) }
    }
    return { dataset } satisfies SnapshotRead as SnapshotRead
  })
