/**
 * The reference meta-analysis (test/fixtures/meta/meta_reference.py, written from the papers with
 * Python's standard library) of sets of estimates with their variances: one interpreter for all
 * the sets, its results in their order.
 */
import { execFileSync } from "node:child_process"

const SCRIPT = new URL("../fixtures/meta/meta_reference.py", import.meta.url).pathname

/** One study: an estimate and its variance. */
export interface Study {
  readonly estimate: number
  readonly variance: number
}

/** The reference's results (fixed, dl, reml, reml_hk, dl_hk, q, q_p, i2, prediction), one per set. */
export const metaReference = (sets: ReadonlyArray<ReadonlyArray<Study>>): Array<any> =>
  JSON.parse(execFileSync("python3", [SCRIPT], { input: JSON.stringify({ sets }), encoding: "utf8" }))
