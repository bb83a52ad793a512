/**
 * The order the suite's files start in. vitest starts the slowest first when it has their times
 * from an earlier run (its cache, under node_modules); a fresh clone (CI) has none, and vitest then
 * starts the largest files first — so a slow small file could start last and run on alone at the
 * end while the other workers have nothing left. Here, without times for every file, the files
 * known to be slow start first (SLOW_FIRST, slowest first; test/docs/sequencer.test.ts keeps the
 * list true to the files), then the rest in vitest's order.
 */
import { relative } from "node:path"
import { BaseSequencer, type TestSpecification } from "vitest/node"

/** The slowest files of a whole run on two cores, slowest first. */
export const SLOW_FIRST: ReadonlyArray<string> = [
  "test/package/pack.test.ts",
  "test/import/stop.test.ts",
  "test/import/fhir-roundtrip.test.ts",
  "test/cli/data-stop.test.ts",
  "test/scale/multiprocess.test.ts",
  "test/import/refresh.test.ts",
  "test/import/kill.test.ts",
  "test/health/snapshot.test.ts",
  "test/plugin/meta-analysis.test.ts",
  "test/plugins/device-outcomes.test.ts",
  "test/portal/security.test.ts",
  "test/network/network.test.ts",
  "test/scale/threads.test.ts",
  "test/import/csv-stream.test.ts",
  "test/plugin/testing.test.ts"
]

/** `files` (paths from the root) in the order above, the rest after them in their own order. */
export const slowFirst = <A>(files: ReadonlyArray<A>, path: (file: A) => string): Array<A> => {
  const rank = (file: A) => {
    const i = SLOW_FIRST.indexOf(path(file))
    return i === -1 ? SLOW_FIRST.length : i
  }
  // Array#sort is stable: the files not listed keep vitest's order.
  return [...files].sort((a, b) => rank(a) - rank(b))
}

export default class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: Array<TestSpecification>): Promise<Array<TestSpecification>> {
    const sorted = await super.sort(files)
    if (files.every((spec) => this.ctx.cache.getTestSpecificationResult(spec) !== undefined)) return sorted
    return slowFirst(sorted, (spec) => relative(spec.project.config.root, spec.moduleId).split("\\").join("/"))
  }
}
