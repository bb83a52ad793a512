/**
 * POST /v1/device-outcomes: the device's implants placed in the period (WASM scans), each study's
 * estimate of each metric (WASM grouped sums), pooled across studies (a rate by the binomial-normal
 * model, a mean score by DerSimonian–Laird).
 */
import { Effect } from "effect"
import { closest, Disclosure, fail, parseMonths, resolveCode, roundTo, ViewWanted } from "../../src/plugin/Plugin.ts"
import { datasetCache, HealthData, Kernels } from "../../src/plugin/experimental.ts"
import { forestRows } from "./forest.ts"
import { implantsInPeriod, isProportion, poolMetric, studyEstimates } from "./pooling.ts"
import type { DeviceOutcomesRequest, DeviceOutcomesResponse, DeviceOutcomesViewData } from "./schema.ts"

type Answer = typeof DeviceOutcomesResponse.Type & { readonly view_data?: typeof DeviceOutcomesViewData.Type }

/** Answers kept per dataset, keyed by the decoded request and whether the forest was asked for (the pooling is deterministic). */
const answers = datasetCache<Answer>(256)

/** Answers one request (a repeated one from the cache). */
export const deviceOutcomes = (request: typeof DeviceOutcomesRequest.Type) =>
  Effect.gen(function*() {
    const data = yield* (yield* HealthData).dataset
    const view = yield* ViewWanted
    return yield* answers(data, `${view ? "view " : ""}${JSON.stringify(request)}`, compute(request, view))
  })

/** Computes one answer (with the forest plot's rows when `view`). */
const compute = (request: typeof DeviceOutcomesRequest.Type, view: boolean) =>
  Effect.gen(function*() {
    const kernels = yield* Kernels
    const data = yield* (yield* HealthData).dataset
    const devices = data.vocabulary.device
    const code = resolveCode(data, "device", request.device_category)
    const device = code === undefined ? -1 : devices.indexOf(code)
    if (device < 0) {
      return yield* fail("unknown_device", `No device category named '${request.device_category}' in the dataset.`, {
        suggestions: closest(request.device_category, devices)
      })
    }
    const known = data.vocabulary.device_metric
    const unknown = request.outcome_metrics.flatMap((m, i) => (known.includes(m) ? [] : [{ path: `/outcome_metrics/${i}`, message: `Unknown metric '${m}'; known metrics: ${known.join(", ")}` }]))
    if (unknown.length > 0) {
      return yield* fail("unknown_metric", `Unknown outcome metric${unknown.length > 1 ? "s" : ""}; the known ones are ${known.join(", ")}.`, { errors: unknown })
    }
    const months = parseMonths(request.time_period)!
    const selected = yield* Effect.orDie(implantsInPeriod(kernels, data, device, months))
    const disclosure = yield* Disclosure
    yield* disclosure.cohort(selected.size, `The implants of ${request.device_category} placed in the last ${months === 1 ? "month" : `${months} months`}`)
    if (selected.size < 2) {
      return yield* fail("cohort_too_small", `${selected.size} ${request.device_category} implant(s) were placed in the last ${months} months; at least 2 are needed.`, {
        context: { cohort_size: selected.size, required: 2 }
      })
    }
    const outcomes: Record<string, number | null> = {}
    const forest: Array<typeof DeviceOutcomesViewData.Type.forest[number]> = []
    for (const metric of request.outcome_metrics) {
      const studies = yield* Effect.orDie(studyEstimates(kernels, data, selected.prepared, selected.mask, metric))
      if (studies.length === 0) {
        return yield* fail("cohort_too_small", `No study has enough ${metric} values for ${request.device_category} in the last ${months} months.`, {
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
      studies_analyzed: selected.studies,
      outcomes,
      sample_size: selected.size,
      ...(view ? { view_data: { forest } } : {})
    }
    return response
  })
