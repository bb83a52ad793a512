/**
 * The plugins' loops over patients stay optimized from one question to the next (src/plugin/hotLoops.ts):
 * V8 13 compiles a long loop while it runs, before the code after it has run, and would then bail
 * out of that compiled code at the end of the loop on every later call — running each call's first
 * thousands of iterations in the interpreter. Read from V8's own deoptimization trace of a server
 * (no compute threads) asked new population, clinical, drug-outcomes and risk-model questions.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { OUTCOME_TYPES } from "../../plugins/drug-outcomes/schema.ts"
import { codesOf } from "../../src/health/vocabulary.ts"
import { call, fixtureDataDir, newAccount, startServer, type TestServer, waitReady } from "../support/server.ts"
import { SERVER_NODE_FLAGS } from "../../src/nodeFlags.ts"

let server: TestServer
beforeAll(async () => {
  server = await startServer({ dataDir: fixtureDataDir(inject("fixtureDir")), nodeArgs: [...SERVER_NODE_FLAGS, "--trace-deopt"], env: { HCC_THREADS: "0" } })
  await waitReady(server)
})
afterAll(async () => {
  await server.stop()
})

/** V8's bailouts for missing type feedback, per function (its SharedFunctionInfo), from the trace. */
const feedbackBailouts = (trace: string): Map<string, number> => {
  const counts = new Map<string, number>()
  for (const line of trace.split("\n")) {
    const m = /reason: Insufficient type feedback[^)]*\): begin\. deoptimizing 0x[0-9a-f]+ <JSFunction ([^ ]*) ?\(sfi = (0x[0-9a-f]+)\)>/.exec(line)
    if (m === null) continue
    const fn = `${m[1] || "(anonymous)"} ${m[2]}`
    counts.set(fn, (counts.get(fn) ?? 0) + 1)
  }
  return counts
}

describe("loops over patients", () => {
  it("do not bail out of their optimized code once per question", async () => {
    const { token } = newAccount(server, { tier: "unlimited", burstLimit: 1000 })
    const questions: Array<readonly [string, unknown]> = []
    const drugs = codesOf("drug")
    const conditions = codesOf("condition")
    for (let i = 0; i < 40; i++) {
      questions.push(["/v1/drug-outcomes", { drug: drugs[i % drugs.length], outcome_type: OUTCOME_TYPES[Math.floor(i / drugs.length) % OUTCOME_TYPES.length] }])
      questions.push(["/v1/risk-model", { patient_profile: { axes_snapshot: { PO: 2 + (i % 7), NM: 4.4 }, age_range: "65-74", conditions: [conditions[i % conditions.length]] }, risk_type: "readmission", horizon: "30_days" }])
      questions.push(["/v1/population", { cohort_definition: { age_range: `${10 + i}-${95 - (i % 7)}` }, analysis_type: "trend" }])
      questions.push(["/v1/clinical", { query: `Patient with ${["hypertension", "diabetes", "copd", "depression"][i % 4]}, NM declining?`, axes: ["PO", "NM", "ER"], time_range: ["30_days", "90_days", "6_months", "1_year", "all"][i % 5] }])
    }
    const before = server.stdout().length
    for (const [path, body] of questions) {
      const res = await call(server, path, { body, token })
      expect(res.status, `${path} ${JSON.stringify(body)}`).toBe(200)
      await res.arrayBuffer()
    }
    const worst = [...feedbackBailouts(server.stdout().slice(before))].sort((a, b) => b[1] - a[1])
    // A loop whose function has run only in its first long call bails out on every later call;
    // with every hot loop in a function of its own (or primed), none does more than a couple of times.
    expect(worst.filter(([, n]) => n > 2), JSON.stringify(worst.slice(0, 5))).toEqual([])
  })
})
