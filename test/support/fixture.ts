/**
 * The run's generated dataset (globalSetup.ts) both in-process — loaded as the service loads it, to
 * compute reference numbers — and behind a real server on a private copy.
 */
import * as Effect from "effect/Effect"
import { join } from "node:path"
import { afterAll, beforeAll, inject } from "vitest"
import type { Dataset } from "../../src/health/HealthData.ts"
import type { ScoreStorage } from "../../src/health/panelStorage.ts"
import { datasetStamp, readSnapshot, SNAPSHOT_FILE } from "../../src/health/snapshot.ts"
import * as SqliteClient from "../../src/db/SqliteClient.ts"
import { Kernels, type KernelsService } from "../../src/kernels/Kernels.ts"
import * as KernelsLayer from "../../src/kernels/Kernels.ts"
import { fixtureDataDir, startServer, type TestServer, waitReady } from "./server.ts"

/**
 * The run's dataset loaded in this process, once per worker: the files that use it only read it
 * (and the kernels it is resident in), and a worker runs file after file (vitest's `isolate: false`).
 */
let loaded: Promise<readonly [Dataset, KernelsService]> | undefined

/**
 * The run's dataset in `dir` (a copy of the run's folder) as a server on the folder loads it, into
 * the core of the Kernels provided: from the snapshot the run wrote beside it (the SQL loader's
 * columns, byte for byte: snapshot.test.ts holds the two equal), which it must hold.
 */
export const readFixture = (dir: string, storage: ScoreStorage = "compact") =>
  Effect.gen(function*() {
    const stamp = yield* datasetStamp.pipe(Effect.provide(SqliteClient.layer({ filename: join(dir, "hcc.db") })))
    if (stamp === undefined) return yield* Effect.die(new Error(`no dataset in ${dir}`))
    const read = yield* readSnapshot(join(dir, SNAPSHOT_FILE), stamp, yield* Kernels, undefined, undefined, storage)
    if (!("dataset" in read)) return yield* Effect.die(new Error(`the run's snapshot in ${dir} was not read: ${read.skipped}`))
    return read.dataset
  })

/** The dataset, the WASM kernels it is resident in, and a ready server on a copy of it. */
export const fixtureServerAndData = async (): Promise<{ readonly server: TestServer; readonly data: Dataset; readonly kernels: KernelsService }> => {
  const dir = fixtureDataDir(inject("fixtureDir"))
  loaded ??= Effect.runPromise(
    Effect.gen(function*() {
      return [yield* readFixture(dir), yield* Kernels] as const
    }).pipe(Effect.provide(KernelsLayer.layerWasm))
  )
  const [data, kernels] = await loaded
  const server = await startServer({ dataDir: dir })
  await waitReady(server)
  return { server, data, kernels }
}

/** Registers beforeAll/afterAll for a file: the fixture server and data, readable once the hooks ran. */
export const useFixture = () => {
  const ctx = {} as { server: TestServer; data: Dataset; kernels: KernelsService }
  beforeAll(async () => {
    Object.assign(ctx, await fixtureServerAndData())
  })
  afterAll(async () => {
    await ctx.server.stop()
  })
  return ctx
}
