/**
 * The snapshot of the loaded columns (src/health/snapshot.ts): read back it is the dataset the SQL
 * loader makes, bit for bit; a restart reads it and answers exactly as the start that read SQL did
 * (with and without compute threads); it is never read for another dataset, a damaged file or
 * with HCC_SNAPSHOT=off; it works on PostgreSQL too.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { createHash } from "node:crypto"
import { copyFileSync, existsSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { beforeAll, describe, expect, inject, it } from "vitest"
import builtins from "../../plugins/index.ts"
import * as SqliteClient from "../../src/db/SqliteClient.ts"
import type { Dataset } from "../../src/health/HealthData.ts"
import { loadDataset } from "../../src/health/loader.ts"
import { datasetStamp, readSnapshot, SNAPSHOT_FILE, SNAPSHOT_FORMAT, type SnapshotRead, writeSnapshot } from "../../src/health/snapshot.ts"
import { Kernels } from "../../src/kernels/Kernels.ts"
import { Arena } from "../../src/kernels/Arena.ts"
import { makeWasm } from "../../src/kernels/Kernels.ts"
import { MISSING_TENTH } from "../../src/kernels/tenths.ts"
import { instantiateCore } from "../../src/kernels/WasmModule.ts"
import * as KernelsLayer from "../../src/kernels/Kernels.ts"
import { startOn } from "../support/engines.ts"
import { COLD } from "../support/questions.ts"
import { call, fixtureDataDir, hcc, newAccount, startServer, type TestServer, tempDataDir, waitForLog, waitReady } from "../support/server.ts"

/** A dataset as plain values: every array by its type, length and SHA-256 (NaN bits included); pointers left out. */
const fingerprint = (value: unknown): unknown => {
  if (ArrayBuffer.isView(value)) {
    const bytes = new Uint8Array(value.buffer, value.byteOffset, value.byteLength)
    return `${value.constructor.name}(${(value as unknown as { length: number }).length}) ${createHash("sha256").update(bytes).digest("hex")}`
  }
  if (value instanceof Map) return { map: [...value].map(([k, v]) => [k, fingerprint(v)]) }
  if (Array.isArray(value)) return value.map(fingerprint)
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).filter(([k]) => k !== "ptr").map(([k, v]) => [k, fingerprint(v)]))
  }
  return value
}

describe("the snapshot file", () => {
  const dir = tempDataDir()
  const path = join(dir, SNAPSHOT_FILE)
  let loaded: Dataset
  let stamp: string
  const read = (p: string, s: string) =>
    Effect.runPromise(Effect.gen(function*() {
      return yield* readSnapshot(p, s, yield* Kernels)
    }).pipe(Effect.provide(KernelsLayer.layerWasm)))

  beforeAll(async () => {
    const data = fixtureDataDir(inject("fixtureDir"))
    ;[loaded, stamp] = await Effect.runPromise(
      Effect.gen(function*() {
        const s = yield* datasetStamp
        return [yield* loadDataset(yield* Kernels), s!] as const
      }).pipe(Effect.provide(Layer.mergeAll(KernelsLayer.layerWasm, SqliteClient.layer({ filename: join(data, "hcc.db") }))))
    )
    await Effect.runPromise(writeSnapshot(path, stamp, loaded))
  }, 60_000)

  it("reads back as exactly the dataset the SQL loader made", async () => {
    const back = await read(path, stamp)
    expect("dataset" in back).toBe(true)
    const dataset = (back as { dataset: Dataset }).dataset
    expect(fingerprint(dataset)).toEqual(fingerprint(loaded))
    // Not vacuous: the panel has values and missing months, the maps have entries.
    expect(dataset.panel.data).toBeInstanceOf(Uint8Array)
    expect(dataset.panel.data.some((v) => v === MISSING_TENTH)).toBe(true)
    expect(dataset.panel.data.some((v) => v > 0 && v <= 100)).toBe(true)
    expect(dataset.patients.conditions.size).toBeGreaterThan(5)
    expect(dataset.surveillance.animal.size).toBeGreaterThan(0)
    // The resident columns live in the core's memory, as the loader's do.
    expect(dataset.panel.ptr).toBeGreaterThan(0)
    expect(dataset.patients.sex.ptr).toBeGreaterThan(0)
  })

  it("with the core's arena, reads the panel and the resident columns straight into the core's memory (no second copy), the rest onto shared memory", async () => {
    const arena = new Arena(instantiateCore())
    const before = arena.used
    const back = await Effect.runPromise(readSnapshot(path, stamp, makeWasm(arena), arena))
    const dataset = (back as { dataset: Dataset }).dataset
    expect(fingerprint(dataset)).toEqual(fingerprint(loaded))
    const p = dataset.patients
    const resident = [dataset.panel, p.birthYear, p.sex, p.region, ...p.conditions.values(), ...p.drugs.values()]
    for (const column of resident) {
      // A view of the core's memory at the column's pointer (a shared memory's buffer object is
      // renewed as it grows, so the bytes are compared, not the objects).
      expect(column.ptr).toBe(column.data.byteOffset)
      const inCore = new Uint8Array(arena.core.memory.buffer, column.ptr, column.data.byteLength)
      expect(Buffer.compare(inCore, new Uint8Array(column.data.buffer, column.data.byteOffset, column.data.byteLength))).toBe(0)
    }
    const bytes = resident.reduce((sum, c) => sum + c.data.byteLength, 0)
    expect(arena.used - before).toBeGreaterThanOrEqual(bytes)
    expect(arena.used - before).toBeLessThan(bytes + 64 * resident.length)
    for (const a of [p.ids, p.deathDay, dataset.encounters.patient, dataset.exposures.adherence, dataset.devices.outcomes.value, ...dataset.surveillance.animal.values()]) {
      expect(a.buffer).toBeInstanceOf(SharedArrayBuffer)
    }
  })

  const damaged = async (change: (copy: string) => void): Promise<SnapshotRead> => {
    const copy = join(dir, `copy-${Math.random().toString(36).slice(2)}`)
    copyFileSync(path, copy)
    change(copy)
    return read(copy, stamp)
  }

  it("is not read for another dataset, another format, a damaged or a missing file — each with its reason", async () => {
    expect(await read(path, "another-stamp")).toEqual({ skipped: "of another dataset (the database's dataset was replaced since)" })
    expect(await read(join(dir, "none"), stamp)).toEqual({ skipped: "no snapshot" })
    expect(await damaged((c) => truncateSync(c, statSync(c).size - 64))).toEqual({ skipped: expect.stringMatching(/^damaged \(\d+ bytes, its header describes \d+\)$/) })
    expect(await damaged((c) => writeFileSync(c, "not a snapshot at all"))).toEqual({ skipped: "not a snapshot (no HCCSNAP1 mark)" })
    expect(await damaged((c) => {
      const bytes = readFileSync(c)
      const at = bytes.indexOf(`"format":${SNAPSHOT_FORMAT}`)
      bytes.write('"format":7', at)
      writeFileSync(c, bytes)
    })).toEqual({ skipped: `written in format 7, this version reads ${SNAPSHOT_FORMAT}` })
  })
})

const log = (server: TestServer, msg: string) => server.logLines().find((l) => l.msg === msg)
/** The `health data loaded` line (written once the loader is done: ready, and the snapshot kept or not). */
const loadedLine = (server: TestServer) => waitForLog(server, (l) => l.msg === "health data loaded")

/** Every built-in example and the cold questions, answered by `server` (request ids left out). */
const answers = async (server: TestServer) => {
  const token = newAccount(server, { tier: "unlimited", burstLimit: 1_000_000 }).token
  const out: Array<unknown> = []
  const questions = [...builtins.flatMap((p) => (p.examples ?? []).map((e) => [p.path, e.request] as const)), ...COLD]
  for (const [path, body] of questions) {
    const res = await fetch(`${server.url}${path}`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify(body) })
    const { request_id: _, ...rest } = (await res.json()) as Record<string, unknown>
    out.push([path, res.status, rest])
  }
  return out
}

describe("a server with a snapshot (SQLite)", () => {
  // The fixture's copy without its snapshot: the first start loads from SQL and writes one.
  const dir = fixtureDataDir(inject("fixtureDir"))
  rmSync(join(dir, SNAPSHOT_FILE))
  let first: ReadonlyArray<unknown>

  const start = async (env: Record<string, string> = {}) => {
    const server = await startServer({ dataDir: dir, env })
    await waitReady(server)
    return server
  }

  beforeAll(async () => {
    const server = await start()
    try {
      expect(await loadedLine(server)).toMatchObject({ from: "database", scores: "tenths" })
      const written = await waitForLog(server, (l) => l.msg === "dataset snapshot written", 30_000)
      expect(written.file).toBe(join(dir, SNAPSHOT_FILE))
      first = await answers(server)
    } finally {
      await server.stop()
    }
  }, 120_000)


  it("restarts from the snapshot and answers every question exactly as after the load from SQL", async () => {
    const server = await start()
    try {
      expect((await loadedLine(server)).from).toBe("snapshot")
      expect(await answers(server)).toEqual(first)
      // The file is current: not written again.
      expect(log(server, "dataset snapshot written")).toBeUndefined()
    } finally {
      await server.stop()
    }
  }, 120_000)

  it("restarts from the snapshot with compute threads and answers the same", async () => {
    const server = await start({ HCC_THREADS: "2" })
    try {
      expect((await loadedLine(server)).from).toBe("snapshot")
      expect(await answers(server)).toEqual(first)
    } finally {
      await server.stop()
    }
  }, 120_000)

  // The compact storage (scores in tenths, narrow day and flag columns) against the wide one, on
  // one dataset: loaded from SQL, and widened from the compact snapshot.
  it("with HCC_SCORES=wide answers every question exactly as the compact storage does", async () => {
    for (const env of [{ HCC_SCORES: "wide", HCC_SNAPSHOT: "off" }, { HCC_SCORES: "wide" }]) {
      const server = await start(env)
      try {
        expect(await loadedLine(server)).toMatchObject({ from: env.HCC_SNAPSHOT === "off" ? "database" : "snapshot", scores: "wide" })
        expect(await answers(server)).toEqual(first)
      } finally {
        await server.stop()
      }
    }
  }, 240_000)

  it("with HCC_SNAPSHOT=off neither reads nor writes one", async () => {
    const before = statSync(join(dir, SNAPSHOT_FILE)).mtimeMs
    const server = await start({ HCC_SNAPSHOT: "off" })
    try {
      // The loader logs its loaded line once the snapshot is kept or not (HealthDataLive.ts).
      expect((await loadedLine(server)).from).toBe("database")
      expect(log(server, "dataset snapshot written")).toBeUndefined()
      expect(statSync(join(dir, SNAPSHOT_FILE)).mtimeMs).toBe(before)
    } finally {
      await server.stop()
    }
  }, 120_000)

  it("is never read for a replaced dataset: hcc data generate removes it, and a stale copy is refused, logged and rewritten", async () => {
    const stale = join(dir, "stale.snapshot")
    copyFileSync(join(dir, SNAPSHOT_FILE), stale)
    hcc(dir, ["data", "generate", "--patients", "400", "--seed", "5"])
    expect(existsSync(join(dir, SNAPSHOT_FILE))).toBe(false)
    // As if the old file had been left behind (copied back, say): the stamp tells it apart.
    copyFileSync(stale, join(dir, SNAPSHOT_FILE))
    const server = await start()
    try {
      const refused = log(server, "dataset snapshot not used; loading from the database")
      expect(refused?.reason).toBe("of another dataset (the database's dataset was replaced since)")
      expect(await loadedLine(server)).toMatchObject({ from: "database", patients: 400 })
      const catalog = (await (await call(server, "/v1/catalog")).json()) as { dataset: { patients: number } }
      expect(catalog.dataset.patients).toBe(400)
      await waitForLog(server, (l) => l.msg === "dataset snapshot written", 30_000)
    } finally {
      await server.stop()
    }
    const again = await start()
    try {
      expect(await loadedLine(again)).toMatchObject({ from: "snapshot", patients: 400 })
    } finally {
      await again.stop()
    }
  }, 180_000)
})

describe("a server with a snapshot (PostgreSQL)", () => {
  it("writes it after the load from the database and restarts from it with the same answers", async () => {
    const dataDir = tempDataDir()
    const server = await startOn("postgres", { dataDir })
    let first: ReadonlyArray<unknown>
    try {
      await waitReady(server)
      expect((await loadedLine(server)).from).toBe("database")
      await waitForLog(server, (l) => l.msg === "dataset snapshot written", 30_000)
      first = await answers(server)
    } finally {
      await server.stop()
    }
    const again = await startOn("postgres", { dataDir })
    try {
      await waitReady(again)
      expect((await loadedLine(again)).from).toBe("snapshot")
      expect(await answers(again)).toEqual(first)
    } finally {
      await again.stop()
    }
  }, 180_000)
})
