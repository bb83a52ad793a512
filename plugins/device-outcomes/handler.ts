/**
 * POST /v1/device-outcomes: the device's implants placed in the period (WASM scans), each study's
 * estimate of each metric (WASM grouped sums), pooled across studies (a rate by the binomial-normal
 * model, a mean score by DerSimonian–Laird).
 */
import * as Effect from "effect/Effect"
import { closest, Disclosure, fail, parseMonths, PartialWanted, resolveCode, ViewWanted } from "../../src/plugin/Plugin.ts"
import { datasetCache, HealthData, Kernels } from "../../src/plugin/experimental.ts"
import { type Answer, assemble } from "./answer.ts"
import { devicePartial } from "./network.ts"
import { estimatesOf, implantsInPeriod, type StudySums, studySums } from "./pooling.ts"
import type { DeviceOutcomesRequest } from "./schema.ts"

/** Answers kept per dataset, keyed by the decoded request and whether the forest was asked for (the pooling is deterministic). */
const answers = datasetCache<Answer>(256)

/** Answers one request (a repeated one from the cache). */
export const deviceOutcomes = (request: typeof DeviceOutcomesRequest.Type) =>
  Effect.gen(function*() {
    const data = yield* (yield* HealthData).dataset
    const view = yield* ViewWanted
    const partial = yield* PartialWanted
    return yield* answers(data, `${view ? "view " : partial ? "partial " : ""}${JSON.stringify(request)}`, compute(request, view))
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
    const sums = new Map<string, ReadonlyArray<StudySums>>()
    for (const metric of request.outcome_metrics) sums.set(metric, yield* Effect.orDie(studySums(kernels, data, selected.prepared, selected.mask, metric)))
    const answer = yield* assemble(request, selected.size, selected.studies, new Map([...sums].map(([m, s]) => [m, estimatesOf(m, s)])), view)
    return (yield* PartialWanted) ? { ...answer, partial: devicePartial(selected.byStudy, sums, disclosure) } : answer
  })

