/**
 * Readiness checks behind GET /readyz. The platform registers the database check; services that
 * load data at start (the health dataset) register theirs, so /readyz turns ready only when all
 * pass. Each check reports a state (ok, loading, failed), a detail in words and, while a long step
 * runs, its progress — the same object in the 200 and in the 503 (docs/api.md, "Probes").
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"

/** What one check found. */
export interface CheckState {
  readonly status: "ok" | "loading" | "failed"
  readonly detail: string
  /** Share done (0–1) of the step under way, when it is measurable. */
  readonly progress?: number
}

/** One named check. */
export interface ReadinessCheck {
  readonly name: string
  readonly check: Effect.Effect<CheckState>
}

/** The registered checks. */
export class Readiness extends Context.Service<Readiness, {
  /** Adds a check (at layer construction). */
  readonly register: (check: ReadinessCheck) => Effect.Effect<void>
  /** Runs every check; name → state, in registration order. */
  readonly run: Effect.Effect<Record<string, CheckState>>
}>()("hcc/Readiness") {
  /** A registry whose first check is `SELECT 1` on the state database. */
  static readonly layer = Layer.effect(
    Readiness,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const checks: Array<ReadinessCheck> = [{
        name: "database",
        check: sql`SELECT 1`.pipe(
          Effect.as<CheckState>({ status: "ok", detail: "the state database answers" }),
          Effect.orElseSucceed((): CheckState => ({ status: "failed", detail: "the state database does not answer" }))
        )
      }]
      return Readiness.of({
        register: (check) => Effect.sync(() => void checks.push(check)),
        run: Effect.map(Effect.forEach(checks, (c) => c.check), (states) => Object.fromEntries(checks.map((c, i) => [c.name, states[i]!])))
      })
    })
  )
}
