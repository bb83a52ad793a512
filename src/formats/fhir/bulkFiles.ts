/**
 * The files of a FHIR Bulk Data export (Bulk Data Access IG v2, "Bulk Data Output File
 * Organization"): NDJSON, one resource per line, each file holding resources of one type,
 * optionally gzip'd. Files are found by name — `<Type>.ndjson`, `<Type>.<n>.ndjson`,
 * `<n>.<Type>.ndjson` (as bulk clients save them), each with `.gz` — in the folders given, or
 * given one by one; a file whose name names no type is typed by its first resource.
 */
import * as NodeStream from "@effect/platform-node/NodeStream"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import { closeSync, existsSync, openSync, readdirSync, readFileSync, readSync, statSync } from "node:fs"
import { createReadStream } from "node:fs"
import { basename, join } from "node:path"
import { createGunzip, gunzipSync } from "node:zlib"

/** One file of the export. */
export interface BulkFile {
  readonly path: string
  /** The name shown in messages. */
  readonly name: string
  /** Its resource type (from the name, else from its first line), or undefined when it has none (empty). */
  readonly type: string | undefined
  readonly gzip: boolean
  readonly bytes: number
}

const NDJSON = /\.(ndjson|jsonl)(\.gz)?$/i

/** The resource type a file name names: a capitalised word part of `<Type>[.<n>].ndjson` or `<n>.<Type>.ndjson`. */
const typeFromName = (name: string): string | undefined => {
  const parts = name.replace(NDJSON, "").split(".")
  return parts.find((p) => /^[A-Z][A-Za-z]+$/.test(p))
}

/** The resourceType of a file's first non-empty line, or undefined (empty, or not readable as gzip). */
const typeFromFirstLine = (path: string, gzip: boolean): string | undefined => {
  const fd = openSync(path, "r")
  const buffer = Buffer.alloc(64 * 1024)
  const n = readSync(fd, buffer, 0, buffer.length, 0)
  closeSync(fd)
  const head = buffer.subarray(0, n)
  // A truncated gzip stream inflates as far as it goes (sync flush); a corrupt one gives no type.
  const text = gzip ? Result.getOrUndefined(Result.try(() => gunzipSync(head, { finishFlush: 2 }).toString("utf8"))) : head.toString("utf8")
  const first = text?.split("\n").find((l) => l.trim() !== "") ?? ""
  return /"resourceType"\s*:\s*"([A-Za-z]+)"/.exec(first)?.[1]
}

/**
 * The bulk files among `paths` (folders are listed, files taken as they are), in a stable order:
 * by type, then by name (a name several folders hold: in the order of the paths, named by path). Paths that do not exist are returned apart.
 */
export const findBulkFiles = (paths: ReadonlyArray<string>): { readonly files: ReadonlyArray<BulkFile>; readonly missing: ReadonlyArray<string> } => {
  const files: Array<BulkFile> = []
  const missing: Array<string> = []
  const take = (path: string, name: string) => {
    const gzip = /\.gz$/i.test(name)
    files.push({ path, name, type: typeFromName(name) ?? typeFromFirstLine(path, gzip), gzip, bytes: statSync(path).size })
  }
  for (const p of paths) {
    if (!existsSync(p)) {
      missing.push(p)
      continue
    }
    if (statSync(p).isDirectory()) {
      for (const name of readdirSync(p).sort()) if (NDJSON.test(name) && statSync(join(p, name)).isFile()) take(join(p, name), name)
    } else {
      take(p, basename(p))
    }
  }
  // A stable sort: files of one name keep the order of the paths given.
  files.sort((a, b) => ((a.type ?? "") < (b.type ?? "") ? -1 : (a.type ?? "") > (b.type ?? "") ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  // Files of one name in several folders (an export and its increment) are named by their paths, so a message tells them apart.
  const names = new Map<string, number>()
  for (const f of files) names.set(f.name, (names.get(f.name) ?? 0) + 1)
  return { files: files.map((f) => (names.get(f.name)! > 1 ? { ...f, name: f.path } : f)), missing }
}

/** The largest file read as a possible manifest (a manifest lists files; it is never large). */
const MAX_MANIFEST_BYTES = 16 << 20

/**
 * The export's manifest, when the client saved it beside the files: the JSON a completed export's
 * status request answers (Bulk Data Access IG v2, "Response - Complete Status"), an object with
 * `transactionTime` — the instant the export stands for: no resource in it was modified after it
 * — and an `output` array. Looked for among the `.json` files in the folders given and the files
 * given; undefined when there is none.
 */
export const findManifest = (paths: ReadonlyArray<string>): { readonly name: string; readonly transactionTime: unknown } | undefined => {
  const candidates: Array<readonly [string, string]> = []
  for (const p of paths) {
    if (!existsSync(p)) continue
    if (statSync(p).isDirectory()) {
      for (const name of readdirSync(p).sort()) if (/\.json$/i.test(name) && !name.startsWith(".")) candidates.push([join(p, name), name])
    } else if (/\.json$/i.test(p)) {
      candidates.push([p, basename(p)])
    }
  }
  for (const [path, name] of candidates) {
    const stat = statSync(path)
    if (!stat.isFile() || stat.size > MAX_MANIFEST_BYTES) continue
    const json = Result.getOrUndefined(Result.try(() => JSON.parse(readFileSync(path, "utf8")) as unknown))
    if (typeof json === "object" && json !== null && "transactionTime" in json && "output" in json && Array.isArray(json.output)) {
      return { name, transactionTime: json.transactionTime }
    }
  }
  return undefined
}

/** Bytes read per piece of a file. */
const READ_BYTES = 1 << 20

/** A part of a file read on its own: bytes [start, end), starting at a line's start. */
export interface FilePart {
  readonly part: number
  readonly start: number
  readonly end: number
}

/** Bytes a part of a large uncompressed file has, about (a gzip'd file is read whole). */
export const PART_BYTES = 128 * 1024 * 1024

/** The parts a file is read in: one for a gzip'd or small file, else pieces of about PART_BYTES, each from a line's start. */
export const partsOf = (file: BulkFile, partBytes = PART_BYTES): ReadonlyArray<FilePart> => {
  if (file.gzip || file.bytes <= partBytes) return [{ part: 0, start: 0, end: file.bytes }]
  const fd = openSync(file.path, "r")
  const window = Buffer.alloc(64 * 1024)
  const starts = [0]
  for (let at = partBytes; at < file.bytes; at += partBytes) {
    // The next line's start at or after `at` (a line longer than the window: look further).
    let pos = at
    for (;;) {
      const n = readSync(fd, window, 0, window.length, pos)
      if (n === 0) {
        pos = file.bytes
        break
      }
      const nl = window.subarray(0, n).indexOf(10)
      if (nl >= 0) {
        pos += nl + 1
        break
      }
      pos += n
    }
    if (pos < file.bytes && pos > starts[starts.length - 1]!) starts.push(pos)
  }
  closeSync(fd)
  return starts.map((start, part) => ({ part, start, end: starts[part + 1] ?? file.bytes }))
}

/**
 * Reads a file's lines (or a part's) in batches: `onLines(lines, firstLineNumber)` for every piece
 * (line numbers from 1 at the part's start; empty lines included, so numbers stay right), the next
 * piece read once its Effect is done (so a slow consumer holds the reading back). `onBytes` hears
 * the (compressed) bytes read so far. Succeeds with the lines the part holds.
 */
export const forEachLines = <E>(
  file: BulkFile,
  onLines: (lines: ReadonlyArray<string>, first: number) => Effect.Effect<void, E>,
  onBytes: (bytes: number) => void = () => {},
  part?: FilePart
): Effect.Effect<number, Error | E> =>
  Effect.suspend(() => {
    const raw = part === undefined || part.end <= part.start
      ? createReadStream(file.path, { highWaterMark: READ_BYTES })
      : createReadStream(file.path, { highWaterMark: READ_BYTES, start: part.start, end: part.end - 1 })
    let read = 0
    raw.on("data", (chunk) => {
      read += chunk.length
      onBytes(read)
    })
    const decoder = new TextDecoder("utf-8", { fatal: true })
    let rest = ""
    let line = 1
    const decode = (chunk: Uint8Array | undefined) =>
      Effect.try({
        try: () => {
          const text = rest + (chunk === undefined ? decoder.decode() : decoder.decode(chunk, { stream: true }))
          const lines = text.split("\n")
          rest = chunk === undefined ? "" : lines.pop()!
          const first = line
          const complete = chunk === undefined && lines.length === 1 && lines[0] === "" ? [] : lines
          line += complete.length
          return { lines: complete, first }
        },
        catch: (e) => new Error(`${file.name}:${line}: ${e instanceof Error ? e.message : String(e)}`)
      })
    return NodeStream.fromReadable<Uint8Array, Error>({
      evaluate: () => (file.gzip ? raw.pipe(createGunzip()) : raw),
      onError: (e) => new Error(`${file.name}: ${e instanceof Error ? e.message : String(e)}`)
    }).pipe(
      Stream.runForEach((chunk) => Effect.flatMap(decode(chunk), ({ first, lines }) => (lines.length > 0 ? onLines(lines, first) : Effect.void))),
      Effect.andThen(Effect.flatMap(decode(undefined), ({ first, lines }) => (lines.length > 0 ? onLines(lines, first) : Effect.void))),
      Effect.map(() => line - 1)
    )
  })
