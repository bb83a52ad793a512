/**
 * Readiness checks behind GET /readyz. The platform registers the database check; services that
 * load data at start (the health dataset) register theirs, so /readyz turns ready only when all pass.
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"

/** One named check: succeeds when its dependency is usable, else fails with a short reason. */
export interface ReadinessCheck {
  readonly name: string
  readonly check: Effect.Effect<void, string>
}

/** The registered checks. */
export class Readiness extends Context.Service<Readiness, {
  /** Adds a check (at layer construction). */
  readonly register: (check: ReadinessCheck) => Effect.Effect<void>
  /** Runs every check; returns each one's result. */
  readonly run: Effect.Effect<ReadonlyArray<{ readonly name: string; readonly ok: boolean; readonly reason: string }>>
}>()("hcc/Readiness") {
  /** A registry whose first check is `SELECT 1` on the state database. */
  static readonly layer = Layer.effect(
    Readiness,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const checks: Array<ReadinessCheck> = [{
        name: "database",
        check: Effect.asVoid(sql`SELECT 1`).pipe(Effect.mapError(() => "the database does not answer"))
      }]
      return Readiness.of({
        register: (check) => Effect.sync(() => void checks.push(check)),
        run: Effect.forEach(checks, (c) =>
          c.check.pipe(
            Effect.match({
              onSuccess: () => ({ name: c.name, ok: true, reason: "ok" }),
              onFailure: (reason) => ({ name: c.name, ok: false, reason })
            })
          ))
      })
    })
  )
}
