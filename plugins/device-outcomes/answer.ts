/** A device-outcomes answer from each metric's study estimates: here, or pooled across a network's sites (network.ts). */
import * as Effect from "effect/Effect"
import { Disclosure, fail, parseMonths, roundTo } from "../../src/plugin/Plugin.ts"
import { forestRows } from "./forest.ts"
import { isProportion, poolMetric, type StudyEstimate } from "./pooling.ts"
import type { DeviceOutcomesRequest, DeviceOutcomesResponse, DeviceOutcomesViewData } from "./schema.ts"

/** An answer, with the forest plot's rows when the view representation was asked for. */
export type Answer = typeof DeviceOutcomesResponse.Type & { readonly view_data?: typeof DeviceOutcomesViewData.Type }

/** The answer from each metric's study estimates, with what each figure rests on recorded and, when `view`, the forest plot's rows. */
export const assemble = (request: typeof DeviceOutcomesRequest.Type, implants: number, studiesAnalyzed: number, byMetric: ReadonlyMap<string, ReadonlyArray<StudyEstimate>>, view: boolean) =>
  Effect.gen(function*() {
    const disclosure = yield* Disclosure
    const outcomes: Record<string, number | null> = {}
    const forest: Array<typeof DeviceOutcomesViewData.Type.forest[number]> = []
    for (const metric of request.outcome_metrics) {
      const studies = byMetric.get(metric) ?? []
      if (studies.length === 0) {
        return yield* fail("cohort_too_small", `No study has enough ${metric} values for ${request.device_category} in the last ${parseMonths(request.time_period)} months.`, {
          context: { cohort_size: 0, required: 1 }
        })
      }
      outcomes[metric] = roundTo(poolMetric(metric, studies, false).estimate, 4)
      // A rate rests on its implants, those with the event and those without; a mean on its values.
      const n = studies.reduce((a, s) => a + s.n, 0)
      const events = studies.reduce((a, s) => a + s.events, 0)
      const basis = isProportion(metric) ? [n, events, n - events] : [n]
      disclosure.rests(`/outcomes/${metric}`, ...basis)
      if (view) {
        // Each study's row rests on its own implants (and events); the pooled row on the metric's.
        for (const row of forestRows(metric, studies)) {
          const at = `/view_data/forest/${forest.length}`
          const study = studies.find((s) => s.study === row.label)
          const rests = row.kind === "pooled" ? basis : isProportion(metric) ? [study!.n, study!.events, study!.n - study!.events] : [study!.n]
          for (const field of ["estimate", "ci_low", "ci_high", "tau2", "i2"]) disclosure.rests(`${at}/${field}`, ...rests)
          forest.push(row)
        }
      }
    }
    const response: Answer = {
      device_category: request.device_category,
      studies_analyzed: studiesAnalyzed,
      outcomes,
      sample_size: implants,
      ...(view ? { view_data: { forest } } : {})
    }
    return response
  })
