/**
 * The suite's order without earlier times (test/support/sequencer.ts): the listed slow files first,
 * slowest first, each a file of the run; the rest after them in the order given.
 */
import { existsSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import config from "../../vitest.config.ts"
import SlowFirstSequencer, { SLOW_FIRST, slowFirst } from "../support/sequencer.ts"
import { ROOT } from "../support/server.ts"

describe("the order of the suite's files", () => {
  it("lists files of the run, each once", () => {
    expect(SLOW_FIRST.filter((f) => !existsSync(join(ROOT, f)))).toEqual([])
    expect(SLOW_FIRST.filter((f) => !/^(test|plugins)\/.+\.test\.ts$/.test(f))).toEqual([])
    expect(new Set(SLOW_FIRST).size).toBe(SLOW_FIRST.length)
  })

  it("starts the listed files first, in the list's order, and keeps the others' order", () => {
    const given = ["test/a.test.ts", SLOW_FIRST[2]!, "test/b.test.ts", SLOW_FIRST[0]!, "test/c.test.ts"]
    expect(slowFirst(given, (f) => f)).toEqual([SLOW_FIRST[0], SLOW_FIRST[2], "test/a.test.ts", "test/b.test.ts", "test/c.test.ts"])
  })

  it("is the suite's sequencer", () => {
    expect(config.test?.sequence?.sequencer).toBe(SlowFirstSequencer)
  })
})
