/** Contract helpers plugins share: p-values, "did you mean" suggestions and request shapes. */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { describe, expect, it } from "vitest"
import { adoptSharedPreparations, datasetCache, preparedPerDataset, sharedPreparationsOf } from "../../src/plugin/cache.ts"
import { DEFAULT_DISCLOSURE, Disclosure, makeDisclosure } from "../../src/plugin/disclosure.ts"
import { parseAgeRange } from "../../src/plugin/shapes.ts"
import { studentTwoSidedP } from "../../src/plugin/stats.ts"
import { closest, editDistance, editDistanceWithin } from "../../src/plugin/suggest.ts"

describe("studentTwoSidedP", () => {
  // Reference values: R 4.4, 2 * pt(-abs(t), df).
  it.each([
    [2.0, 10, 0.07338803],
    [2.228139, 10, 0.05],
    [1.0, 1, 0.5],
    [3.5, 30, 0.001476],
    [1.959964, 1e6, 0.05],
    [0, 5, 1]
  ])("t = %f, df = %f → %f", (t, df, p) => {
    expect(studentTwoSidedP(t, df)).toBeCloseTo(p, 5)
    expect(studentTwoSidedP(-t, df)).toBeCloseTo(p, 5)
  })
  it("is NaN without degrees of freedom", () => {
    expect(studentTwoSidedP(1, 0)).toBeNaN()
  })
})

describe("closest", () => {
  const conditions = ["type_2_diabetes", "hypertension", "heart_failure", "copd", "asthma"]
  it("puts a typo's intended name first", () => {
    expect(closest("type_2_diabets", conditions)[0]).toBe("type_2_diabetes")
    expect(closest("Heart Failure", conditions)[0]).toBe("heart_failure")
    expect(closest("diabetes", conditions)[0]).toBe("type_2_diabetes")
    expect(closest("south_east_asia", ["east_asia", "southeast_asia"])[0]).toBe("southeast_asia")
  })
  it("returns at most `limit` names", () => {
    expect(closest("x", conditions, 2)).toHaveLength(2)
  })
  it("counts a transposition as one edit", () => {
    expect(editDistance("copd", "cpod")).toBe(1)
    expect(editDistance("", "abc")).toBe(3)
  })
  it("agrees with the whole distance table; with a limit, gives the distance up to it and limit + 1 beyond", () => {
    // The textbook recurrence over the whole (|a|+1) × (|b|+1) table, as the reference.
    const reference = (a: string, b: string) => {
      const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)))
      for (let i = 1; i <= a.length; i++) {
        for (let j = 1; j <= b.length; j++) {
          d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
          if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1)
        }
      }
      return d[a.length]![b.length]!
    }
    // Words over a small alphabet (many near misses), lengths 0–9, from a fixed linear congruential sequence.
    let state = 12345
    const next = () => (state = (state * 1103515245 + 12345) % 2147483648)
    const word = () => Array.from({ length: next() % 10 }, () => "abcd"[next() % 4]).join("")
    for (let trial = 0; trial < 3000; trial++) {
      const [a, b] = [word(), word()]
      const exact = reference(a, b)
      expect(editDistance(a, b)).toBe(exact)
      for (const limit of [0, 1, 2, 3]) expect(editDistanceWithin(a, b, limit)).toBe(Math.min(exact, limit + 1))
    }
    // Longer than any earlier call: the reused rows grow.
    expect(editDistance("a".repeat(300), "b".repeat(299))).toBe(300)
  })
})

describe("parseAgeRange", () => {
  it.each([["55-64", [55, 64]], ["0-120", [0, 120]], ["40-40", [40, 40]]])("%s", (text, range) => {
    expect(parseAgeRange(text)).toEqual(range)
  })
  it.each(["64-55", "0-121", "a-b", "55", "-1-5", " 55-64"])("refuses %s", (text) => {
    expect(parseAgeRange(text)).toBeUndefined()
  })
})

describe("datasetCache", () => {
  it("replays what a kept value's computation reported to Disclosure into every request the value answers", async () => {
    const cached = datasetCache<number>(8)
    const dataset = {}
    let computed = 0
    const compute = Effect.gen(function*() {
      computed++
      ;(yield* Disclosure).rests("/contributing_data/axis_correlations/*", 3)
      return 42
    })
    const ask = async () => {
      const recorder = makeDisclosure(DEFAULT_DISCLOSURE)
      const value = await Effect.runPromise(Effect.provideService(cached(dataset, "question", compute), Disclosure, recorder))
      return { value, bases: recorder.bases }
    }
    const fresh = await ask()
    const kept = await ask()
    expect(computed).toBe(1)
    expect(kept).toEqual(fresh)
    expect(fresh.bases).toEqual([{ pointer: "/contributing_data/axis_correlations/*", counts: [3] }])
  })
  it("computes a key asked for concurrently once; the first caller going away fails no one; a failure reaches every waiter and is not kept", async () => {
    const cached = datasetCache<number>(8)
    const d = {}
    let runs = 0
    // Each computation waits for its gate, opened once every caller is waiting.
    const gate = Effect.runSync(Deferred.make<void>())
    const slow = (v: number) => Effect.andThen(Deferred.await(gate), Effect.sync(() => {
      runs++
      return v
    }))
    const first = Effect.runFork(cached(d, "k", slow(1)))
    const rest = Promise.all(Array.from({ length: 9 }, () => Effect.runPromise(cached(d, "k", slow(2)))))
    await Effect.runPromise(Fiber.interrupt(first))
    Effect.runSync(Deferred.succeed(gate, undefined))
    expect(await rest).toEqual(Array(9).fill(1))
    expect(runs).toBe(1)
    let failures = 0
    const failGate = Effect.runSync(Deferred.make<void>())
    const failing = Effect.andThen(Deferred.await(failGate), Effect.suspend(() => {
      failures++
      return Effect.fail("no" as const)
    }))
    const pending = Promise.all(Array.from({ length: 3 }, () => Effect.runPromiseExit(cached(d, "bad", failing))))
    Effect.runSync(Deferred.succeed(failGate, undefined))
    const exits = await pending
    expect(exits.map((e) => e._tag)).toEqual(["Failure", "Failure", "Failure"])
    expect(failures).toBe(1)
    expect(await Effect.runPromise(cached(d, "bad", Effect.succeed(5)))).toBe(5)
  })

  it("computes once per dataset and key, evicts the least recently used, and keeps no failure", () => {
    const cached = datasetCache<number>(2)
    const d1 = {}
    const d2 = {}
    let runs = 0
    const compute = (v: number) => Effect.sync(() => {
      runs++
      return v
    })
    const get = (d: object, k: string, v: number) => Effect.runSync(cached(d, k, compute(v)))
    expect(get(d1, "a", 1)).toBe(1)
    expect(get(d1, "a", 99)).toBe(1)
    expect(runs).toBe(1)
    expect(get(d2, "a", 2)).toBe(2) // another dataset, another entry
    get(d1, "b", 3)
    get(d1, "a", 0) // touch a: b is now the least recently used
    get(d1, "c", 4) // evicts b
    expect(get(d1, "a", 0)).toBe(1)
    expect(get(d1, "b", 5)).toBe(5)
    expect(Effect.runSyncExit(cached(d1, "x", Effect.fail("no")))._tag).toBe("Failure")
    expect(get(d1, "x", 7)).toBe(7)
  })
})

describe("preparedPerDataset", () => {
  it("shared: the value one thread computed is adopted by another, whose store then computes nothing", async () => {
    const name = `shared test ${Math.random()}`
    const first = preparedPerDataset<{ readonly beta: Float64Array }>(name, { shared: true })
    const dataset = {}
    let computed = 0
    const compute = Effect.sync(() => {
      computed++
      return { beta: Float64Array.of(1.5, -2) }
    })
    await Effect.runPromise(first.store(dataset, compute))
    // What thread 1 sends, through a structured clone, to another thread's copy of the dataset.
    const sent = structuredClone(sharedPreparationsOf(dataset))
    expect(Object.keys(sent)).toContain(name)
    const elsewhere = {}
    adoptSharedPreparations(elsewhere, sent)
    await Effect.runPromise(first.store(elsewhere, compute))
    expect(computed).toBe(1)
    expect([...(await Effect.runPromise(first.get(elsewhere))).beta]).toEqual([1.5, -2])
    // The thread that computed it keeps its own value when every thread's values come back.
    const own = await Effect.runPromise(first.get(dataset))
    adoptSharedPreparations(dataset, structuredClone(sharedPreparationsOf(dataset)))
    expect(await Effect.runPromise(first.get(dataset))).toBe(own)
  })

  it("keeps an unshared value to its thread and refuses two shared ones of one name", () => {
    const name = `private test ${Math.random()}`
    const held = preparedPerDataset<number>(name)
    const dataset = {}
    Effect.runSync(held.store(dataset, Effect.succeed(7)))
    expect(Object.keys(sharedPreparationsOf(dataset))).not.toContain(name)
    preparedPerDataset<number>(`${name} shared`, { shared: true })
    expect(() => preparedPerDataset<number>(`${name} shared`, { shared: true })).toThrow(/two shared preparations/)
  })
})
