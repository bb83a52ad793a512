/**
 * HCC_THREADS (src/compute/ComputePool.ts): the analytic endpoints answered on compute threads that
 * share the dataset give exactly the answers the HTTP thread gives in process — built-in examples,
 * cold questions no cache has seen, domain errors, a plugin's defect — and the work really runs on
 * the threads, every one of them.
 */
import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import builtins from "../../plugins/index.ts"
import { codesOf } from "../../src/health/vocabulary.ts"
import { COLD } from "../support/questions.ts"
import { fixtureDataDir, fixturePlugin, newAccount, runServerToExit, startServer, type TestServer, waitForLog, waitReady } from "../support/server.ts"

let inProcess: TestServer
const tokens = new Map<TestServer, string>()
let pooled: TestServer
const plugins = [fixturePlugin("thread-probe"), fixturePlugin("defect")].join(",")
const pooledPlugins = [plugins, fixturePlugin("thread-exit")].join(",")

beforeAll(async () => {
  ;[inProcess, pooled] = await Promise.all([
    // A process: its answers come from its main thread (thread id 0), as a process with no compute threads answers.
    startServer({ dataDir: fixtureDataDir(inject("fixtureDir")), env: { HCC_THREADS: "0", HCC_PLUGINS: plugins }, process: true }),
    startServer({ dataDir: fixtureDataDir(inject("fixtureDir")), env: { HCC_THREADS: "2", HCC_PLUGINS: pooledPlugins, HCC_METRICS_PORT: "0" } })
  ])
  await Promise.all([waitReady(inProcess), waitReady(pooled)])
  // An account the burst limit never stops (the demo account's tier would, over this many calls).
  for (const server of [inProcess, pooled]) tokens.set(server, newAccount(server, { tier: "unlimited", burstLimit: 1_000_000 }).token)
}, 180_000)

afterAll(async () => {
  await Promise.all([inProcess?.stop(), pooled?.stop()])
})

/** Linux scheduling policies (sched.h) as /proc/<pid>/task/<tid>/stat gives them. */
const SCHED_OTHER = 0
const SCHED_IDLE = 5

/** A thread's nice value (field 19) and scheduling policy (field 41). */
const priorityOf = (statPath: string) => {
  const stat = readFileSync(statPath, "utf8")
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  return { nice: Number(fields[16]), policy: Number(fields[38]) }
}

const post = async (server: TestServer, path: string, body: unknown) => {
  const res = await fetch(`${server.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${tokens.get(server)!}`, "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  const json = (await res.json()) as Record<string, unknown>
  const { request_id: _, ...rest } = json
  return { status: res.status, body: rest }
}

describe("compute threads (HCC_THREADS=2)", () => {
  it("logs each thread ready before the service reports ready", async () => {
    // Lines reach the output a turn of the server's event loop after /readyz may have said ready.
    for (const thread of [1, 2]) await waitForLog(pooled, (l) => l.msg === "compute thread ready" && l.thread === thread, 30_000)
    const ready = pooled.logLines().filter((l) => l.msg === "compute thread ready").map((l) => l.thread)
    expect(ready.sort()).toEqual([1, 2])
    expect(inProcess.logLines().some((l) => l.msg === "compute thread ready")).toBe(false)
  })

  it("fits the risk models once per process: thread 1 fits, thread 2 gets a copy (a shared preparation)", async () => {
    const fitted = pooled.logLines().filter((l) => l.msg === "risk model fitted")
    expect(fitted.map((l) => `${String(l.thread)} ${String(l.risk_type)}`).sort()).toEqual(["1 health_decline", "1 hospitalization", "1 readmission"])
    // Thread 2 still ran the risk-model preparation, which found the models in place (its last
    // one: a thread's log lines reach the process's output after the ready it posts may have).
    await waitForLog(pooled, (l) => l.msg === "dataset prepared" && l.thread === 2 && l.plugin === "risk-model", 30_000)
  })

  it("splits the preparations between the threads: each first prepares its part (every other plugin), then the rest, each plugin once per thread", async () => {
    for (const [thread, plugin] of [[1, "population"], [2, "risk-model"]] as const) {
      await waitForLog(pooled, (l) => l.msg === "dataset prepared" && l.thread === thread && l.plugin === plugin, 30_000)
    }
    const order = (thread: number) => pooled.logLines().filter((l) => l.msg === "dataset prepared" && l.thread === thread).map((l) => String(l.plugin))
    // The built-ins with a preparation, in order: clinical, drug-outcomes, risk-model, population.
    expect(order(1)).toEqual(["clinical", "risk-model", "drug-outcomes", "population"])
    expect(order(2)).toEqual(["drug-outcomes", "population", "clinical", "risk-model"])
  })

  it("prepares drug-outcomes' per-dataset statistics before ready, once: new drugs' questions on both threads scan no one but their cohorts", async () => {
    const line = await waitForLog(pooled, (l) => l.msg === "metrics listening", 30_000)
    const calls = async (kernel: string) => {
      const text = await (await fetch(`http://127.0.0.1:${String(line.port)}/metrics`)).text()
      return Number(new RegExp(`^hcc_kernel_duration_seconds_count\\{kernel="${kernel}"\\} (\\d+)`, "m").exec(text)?.[1] ?? 0)
    }
    expect(pooled.logLines().filter((l) => l.msg === "dataset prepared" && l.plugin === "drug-outcomes").map((l) => l.thread).sort()).toEqual([1, 2])
    // A thread's kernel timings ride on its next answer: the preparations' are brought in first.
    const probes = await Promise.all(Array.from({ length: 16 }, () => post(pooled, "/v1/thread-probe", { min_age: 40 })))
    expect(new Set(probes.map((a) => a.body.thread_id)).size).toBe(2)
    const [everyone, cohorts] = [await calls("panelWindows"), await calls("panelWindowsOf")]
    const questions = codesOf("drug").slice(0, 4).flatMap((drug) => ["efficacy", "adherence"].map((outcome_type) => ({ drug, outcome_type, population_size: "minimum_1" })))
    const answers = await Promise.all(questions.map((q) => post(pooled, "/v1/drug-outcomes", q)))
    expect(answers.map((a) => a.status)).toEqual(questions.map(() => 200))
    // Each new (drug, outcome type) scans its cohort twice; everyone's whole-window means were prepared.
    expect(await calls("panelWindowsOf")).toBe(cohorts + 2 * questions.length)
    expect(await calls("panelWindows")).toBe(everyone)
  })

  it("answers every built-in example exactly as the HTTP thread does in process", async () => {
    let compared = 0
    for (const plugin of builtins) {
      for (const example of plugin.examples ?? []) {
        const [a, b] = await Promise.all([post(inProcess, plugin.path, example.request), post(pooled, plugin.path, example.request)])
        expect(b, `${plugin.name} ${example.name}`).toEqual(a)
        compared++
      }
    }
    expect(compared).toBeGreaterThanOrEqual(builtins.length)
  })

  it("answers cold questions and domain errors exactly as in process", async () => {
    const statuses = new Set<number>()
    for (const [path, body] of COLD) {
      const [a, b] = await Promise.all([post(inProcess, path, body), post(pooled, path, body)])
      expect(b, `${path} ${JSON.stringify(body)}`).toEqual(a)
      statuses.add(a.status)
    }
    // Both kinds of answer were compared: answers and 4xx domain errors.
    expect(statuses.has(200)).toBe(true)
    expect([...statuses].some((s) => s >= 400 && s < 500)).toBe(true)
  })

  it("runs the handlers on the compute threads, spread over all of them, over the shared dataset", async () => {
    const here = await post(inProcess, "/v1/thread-probe", { min_age: 40 })
    expect(here.status).toBe(200)
    expect(here.body.thread_id).toBe(0)
    const answers = await Promise.all(Array.from({ length: 16 }, () => post(pooled, "/v1/thread-probe", { min_age: 40 })))
    const threads = new Set(answers.map((a) => a.body.thread_id))
    expect(threads.has(0)).toBe(false)
    expect(threads.size).toBe(2)
    for (const a of answers) expect(a.body.cohort_size).toBe(here.body.cohort_size)
  })

  it("stops a request's work on its thread when the client goes away", async () => {
    const gone = fetch(`${pooled.url}/v1/thread-probe`, {
      method: "POST",
      headers: { authorization: `Bearer ${tokens.get(pooled)!}`, "content-type": "application/json" },
      body: JSON.stringify({ wait_ms: 20_000 }),
      signal: AbortSignal.timeout(300)
    })
    await expect(gone).rejects.toThrow()
    // A JSON line of the service's logger, saying which thread.
    const line = await waitForLog(pooled, (l) => l.msg === "thread-probe interrupted", 5000)
    expect([1, 2]).toContain(line.thread)
  })

  it("records the threads' kernel timings in the process's metrics", async () => {
    const line = await waitForLog(pooled, (l) => l.msg === "metrics listening", 30_000)
    const count = async () => {
      const text = await (await fetch(`http://127.0.0.1:${String(line.port)}/metrics`)).text()
      return Number(/^hcc_kernel_duration_seconds_count\{kernel="panelSums"\} (\d+)/m.exec(text)?.[1] ?? 0)
    }
    const before = await count()
    expect((await post(pooled, "/v1/population", { cohort_definition: { age_range: "30-77" }, analysis_type: "trend" })).status).toBe(200)
    expect(await count()).toBe(before + 1)
  })

  it("answers a plugin's defect on a thread with the same 500, logged once without request values", async () => {
    const [a, b] = await Promise.all([post(inProcess, "/v1/defect", { patient: "p-981" }), post(pooled, "/v1/defect", { patient: "p-981" })])
    expect(a.status).toBe(500)
    expect(b).toEqual(a)
    const line = await waitForLog(pooled, (l) => l.msg === "plugin failed" && l.plugin === "defect")
    expect(JSON.stringify(line)).not.toContain("p-981")
    expect(String(line.message)).toContain("cannot score patient")
  })

  it("replaces a thread that dies: its request fails with a 500 and uncharged, the others keep answering", async () => {
    const usage = async () => {
      const body = (await (await fetch(`${pooled.url}/v1/usage`, { headers: { authorization: `Bearer ${tokens.get(pooled)!}` } })).json()) as Record<string, unknown>
      return { queries: body.queries_today, hcc: body.hcc_cost_today }
    }
    const before = await usage()
    const died = await post(pooled, "/v1/thread-exit", {})
    expect(died.status).toBe(500)
    expect(died.body.code).toBe("internal_error")
    expect(died.body.hcc_cost).toBe(0)
    expect(await usage()).toEqual(before)
    await waitForLog(pooled, (l) => l.msg === "compute thread stopped; starting another" && l.exit_code === 3)
    // Answers go on meanwhile (on the other thread), and the replacement comes back ready.
    const meanwhile = await post(pooled, "/v1/thread-probe", { min_age: 40 })
    expect(meanwhile.status).toBe(200)
    await waitForLog(pooled, (l) => l.msg === "compute thread ready", 5000)
    await expect.poll(() => pooled.logLines().filter((l) => l.msg === "compute thread ready").length, { timeout: 20_000 }).toBe(3)
    const threads = new Set((await Promise.all(Array.from({ length: 16 }, () => post(pooled, "/v1/thread-probe", { min_age: 40 })))).map((a) => a.body.thread_id))
    expect(threads.size).toBe(2)
  })
})

describe("choosing the number of compute threads", () => {
  it("hcc serve --threads 1 starts one thread (the flag wins over HCC_THREADS)", async () => {
    const server = await startServer({ serveArgs: ["--threads", "1"], env: { HCC_THREADS: "0" } })
    try {
      await waitReady(server)
      expect(server.logLines().filter((l) => l.msg === "compute thread ready").map((l) => l.thread)).toEqual([1])
    } finally {
      await server.stop()
    }
  }, 60_000)

  it("while the dataset loads, a plugin that needs no data answers and one that does says 503, as without threads", async () => {
    const server = await startServer({ env: { HCC_THREADS: "2", HCC_POPULATION: "40000", HCC_PLUGINS: fixturePlugin("series-stats") } })
    try {
      const auth = { authorization: `Bearer ${server.demoToken}`, "content-type": "application/json" }
      const stats = await fetch(`${server.url}/v1/series-stats`, { method: "POST", headers: auth, body: JSON.stringify({ values: [1, 2, 3] }) })
      expect(stats.status).toBe(200)
      const population = await fetch(`${server.url}/v1/population`, { method: "POST", headers: auth, body: JSON.stringify({ analysis_type: "trend" }) })
      expect(population.status).toBe(503)
      expect(((await population.json()) as { code: string }).code).toBe("unavailable")
      expect((await fetch(`${server.url}/readyz`)).status).toBe(503)
    } finally {
      await server.stop()
    }
  }, 60_000)

  it("refuses a thread count that is not auto or 0-99, naming the variable", () => {
    const run = runServerToExit({ HCC_THREADS: "-1" })
    expect(run.status).toBe(1)
    expect(run.stdout).toContain("HCC_THREADS")
  })
})

describe("HCC_COMPUTE_PRIORITY", () => {
  const threadPriorities = (server: TestServer) => {
    const pid = server.logLines().find((l) => l.msg === "listening")!.pid as number
    return server.logLines().filter((l) => l.msg === "compute thread ready").map((l) => ({ logged: [l.nice, l.policy], actual: priorityOf(`/proc/${pid}/task/${String(l.tid)}/stat`), http: priorityOf(`/proc/${pid}/stat`) }))
  }
  const warned = (server: TestServer) => server.logLines().filter((l) => l.level === "warn" && String(l.msg).includes("idle scheduling class"))
  /** A server with `count` compute threads and `env`; each thread's priority once all are ready. */
  const priorities = async (count: number, env: Record<string, string | undefined>, check: (threads: ReturnType<typeof threadPriorities>, server: TestServer) => void) => {
    // The default dataset, not the fixture: a thread in the idle class runs only on a core nothing
    // else wants, so on a busy machine the less it has to load before it is ready, the sooner it is.
    const server = await startServer({ env: { HCC_THREADS: String(count), ...env } })
    try {
      await waitReady(server)
      // Ready can be answered before the last thread's line has come through the log pipe.
      await waitForLog(server, () => server.logLines().filter((l) => l.msg === "compute thread ready").length === count)
      const threads = threadPriorities(server)
      expect(threads.length).toBe(count)
      check(threads, server)
    } finally {
      await server.stop()
    }
  }

  it("idle, the default: Linux's idle scheduling class at nice +10, the HTTP thread in the normal class, no warning", () =>
    priorities(2, { HCC_COMPUTE_PRIORITY: undefined }, (threads, server) => {
      for (const t of threads) {
        expect(t.http.policy).toBe(SCHED_OTHER)
        expect(t.actual).toEqual({ nice: Math.min(19, t.http.nice + 10), policy: SCHED_IDLE })
        expect(t.logged).toEqual([t.actual.nice, "idle"])
      }
      expect(warned(server)).toEqual([])
    }), 60_000)

  it("nice: the normal class at nice +10, no warning", () =>
    priorities(1, { HCC_COMPUTE_PRIORITY: "nice" }, ([t], server) => {
      expect(t!.actual).toEqual({ nice: Math.min(19, t!.http.nice + 10), policy: SCHED_OTHER })
      expect(t!.logged).toEqual([t!.actual.nice, "normal"])
      expect(warned(server)).toEqual([])
    }), 60_000)

  it("idle without chrt on the PATH: nice +10 still, and one warning that says why and where to read", () =>
    priorities(2, { HCC_COMPUTE_PRIORITY: undefined, PATH: mkdtempSync(join(tmpdir(), "hcc-no-chrt-")) }, (threads, server) => {
      for (const t of threads) {
        expect(t.actual).toEqual({ nice: Math.min(19, t.http.nice + 10), policy: SCHED_OTHER })
        expect(t.logged).toEqual([t.actual.nice, "normal"])
      }
      expect(warned(server).map((l) => [l.reason, l.see])).toEqual([["chrt (util-linux) is missing, or refused the change", "docs/deploy.md"]])
    }), 60_000)
})
