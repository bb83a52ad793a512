/**
 * The generator plants what truths.ts states, its rows do not depend on chunking, and the SQL schema
 * of migration 2 matches the table descriptions import, export and docs/data.md use.
 */
import { readdirSync } from "node:fs"
import { isDeepStrictEqual } from "node:util"
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"
import { describe, expect, it } from "vitest"
import { deviceStudies, generatedChunks, newCounters, patientRows, surveillanceRows } from "../../src/synthetic/generator.ts"
import { generatedForWriting, generatedOnThread } from "../../src/synthetic/generationThread.ts"
import { PATIENTS_PER_CHUNK } from "../../src/config/limits.ts"
import { HEALTH_TABLES } from "../../src/health/healthTables.ts"
import { runMigrations } from "../../src/db/migrations.ts"
import * as SqliteClient from "../../src/db/SqliteClient.ts"
import * as T from "../../src/synthetic/truths.ts"

/**
 * `expect(actual).toEqual(expected)` for the generator's chunks (hundreds of thousands of rows):
 * Node's strict deep equality decides, in a fraction of the time; toEqual runs only to show what
 * differs. Strict equality is the stricter of the two (prototypes, −0, undefined members).
 */
const expectSameChunks = (actual: unknown, expected: unknown) => {
  if (isDeepStrictEqual(actual, expected)) return
  expect(actual).toEqual(expected)
  expect.fail("equal to toEqual, but not strictly: a prototype, a −0 or an undefined member differs")
}

const options = { patients: 8000, seed: 11 }
const studies = deviceStudies(options.seed)
const rows = patientRows(options, 1, options.patients, studies, newCounters())

describe("generator", () => {
  it("gives the same rows whatever the chunking", () => {
    const whole = patientRows(options, 1, 30, studies, newCounters())
    const ids = newCounters()
    const parts = [patientRows(options, 1, 7, studies, ids), patientRows(options, 8, 23, studies, ids)]
    for (const table of Object.keys(whole) as Array<keyof typeof whole>) {
      expect(parts.flatMap((p) => p[table] ?? [])).toEqual(whole[table])
    }
  })

  it("lands condition prevalences near their targets (± 2 points)", () => {
    for (const c of T.CONDITIONS) {
      const share = rows.patient_conditions!.filter((r) => r[1] === c.code).length / options.patients
      expect(Math.abs(share - c.prevalence), c.code).toBeLessThan(0.02)
    }
  })

  it("plants each adverse-event rate (within 3 standard errors)", () => {
    for (const ae of T.ADVERSE_EVENT_RATES) {
      const exposed = rows.drug_exposures!.filter((r) => r[2] === ae.drug).length
      if (exposed < 200) continue
      const events = rows.adverse_events!.filter((r) => r[2] === ae.drug && r[3] === ae.type).length
      const se = Math.sqrt((ae.rate * (1 - ae.rate)) / exposed)
      expect(Math.abs(events / exposed - ae.rate), ae.drug).toBeLessThan(3 * se)
    }
  })

  it("gives about one admission per 10 persons per year and ~14 % of discharges a readmission", () => {
    const inpatient = rows.encounters!.filter((r) => r[2] === "inpatient")
    const perYear = inpatient.length / options.patients / 3
    expect(perYear).toBeGreaterThan(0.07)
    expect(perYear).toBeLessThan(0.15)
  })

  it("plants each animal → human lead: the human series follows the animal one at the stated lag", () => {
    const s = surveillanceRows(options)
    for (const link of T.ZOONOTIC_LINKS) {
      const animal = s.animal_surveillance!.filter((r) => r[0] === link.species && r[1] === link.condition && r[2] === link.region).map((r) => Number(r[4]))
      const human = s.human_surveillance!.filter((r) => r[0] === link.condition && r[1] === link.region).map((r) => Number(r[3]))
      expect(animal).toHaveLength(T.WINDOW.weeks)
      const lag = link.lagDays / 7
      const corr = (k: number) => {
        const x = animal.slice(0, animal.length - k)
        const y = human.slice(k)
        const mx = x.reduce((a, b) => a + b, 0) / x.length
        const my = y.reduce((a, b) => a + b, 0) / y.length
        let sxy = 0
        let sxx = 0
        let syy = 0
        x.forEach((v, i) => {
          sxy += (v - mx) * (y[i]! - my)
          sxx += (v - mx) ** 2
          syy += (y[i]! - my) ** 2
        })
        return sxy / Math.sqrt(sxx * syy)
      }
      expect(corr(lag), `${link.species}/${link.condition}`).toBeGreaterThan(0.8)
      for (let k = 0; k <= 8; k++) if (Math.abs(k - lag) > 1) expect(corr(k)).toBeLessThan(corr(lag))
    }
  })
})

describe("generation on a thread of its own", () => {
  it("gives the chunks generatedChunks gives, in the same order", async () => {
    const options = { patients: 4500, seed: 3 }
    const onThread: Array<unknown> = []
    for await (const chunk of generatedOnThread(options)) onThread.push(chunk)
    const here = [...generatedChunks(options)]
    expect(onThread.length).toBe(here.length)
    expectSameChunks(onThread, here)
  })

  it("for a writer: one chunk of patients is made on the calling thread, more on a thread; the same chunks either way, from the first at each iteration", async () => {
    // The process's threads as Linux lists them: a worker thread adds its own.
    const osThreads = () => readdirSync("/proc/self/task").length
    for (const [patients, onThread] of [[PATIENTS_PER_CHUNK, false], [PATIENTS_PER_CHUNK + 1, true]] as const) {
      const source = generatedForWriting({ patients, seed: 7 })
      const expected = [...generatedChunks({ patients, seed: 7 })]
      for (let run = 0; run < 3; run++) {
        const before = osThreads()
        let most = before
        const seen: Array<unknown> = []
        for await (const chunk of source) {
          seen.push(chunk)
          most = Math.max(most, osThreads())
        }
        expectSameChunks(seen, expected)
        // The first run only warms the process (its module loads may start libuv's own threads).
        if (run > 0) expect(most > before, `${patients} patients, run ${run}`).toBe(onThread)
      }
    }
  })

  it("leaving early stops the thread, and a new iteration starts again from the first chunk", async () => {
    const source = generatedOnThread({ patients: 10_000, seed: 5 })
    // The generator is lazy: the first two chunks, without making the rest.
    const first: Array<unknown> = []
    for (const chunk of generatedChunks({ patients: 10_000, seed: 5 })) if (first.push(chunk) === 2) break
    for (let run = 0; run < 2; run++) {
      const seen: Array<unknown> = []
      for await (const chunk of source) {
        seen.push(chunk)
        if (seen.length === 2) break
      }
      expectSameChunks(seen, first)
    }
  })
})

describe("SQL schema", () => {
  it("has exactly the documented columns and nullability for every health table", async () => {
    const sets = await Effect.runPromise(
      Effect.gen(function*() {
        yield* runMigrations
        const sql = yield* SqlClient.SqlClient
        // Both sets of tables (the views `<table>` read the active one).
        return yield* Effect.forEach(["a", "b"], (set) =>
          Effect.forEach(HEALTH_TABLES, (t) => sql.unsafe<{ name: string; notnull: number; pk: number }>(`PRAGMA table_info(${t.name}_${set})`)))
      }).pipe(Effect.scoped, Effect.provide(SqliteClient.layer({ filename: ":memory:" })))
    )
    for (const columns of sets) HEALTH_TABLES.forEach((t, i) => {
      expect(columns[i]!.map((c) => c.name), t.name).toEqual(t.columns.map((c) => c.name))
      for (const c of t.columns) {
        const sqlColumn = columns[i]!.find((x) => x.name === c.name)!
        // SQLite reports INTEGER PRIMARY KEY and TEXT PRIMARY KEY columns as nullable; the key is never empty.
        if (sqlColumn.pk === 0) expect(sqlColumn.notnull === 0, `${t.name}.${c.name}`).toBe(c.nullable === true)
      }
      const pk = columns[i]!.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk).map((c) => c.name)
      expect(pk, t.name).toEqual(t.key)
    })
  })
})
