/** POST /v1/clinical: read the question, gather the evidence, answer in the requested format. */
import * as Effect from "effect/Effect"
import { canonicalOrder, Disclosure, fail, roundTo } from "../../src/plugin/Plugin.ts"
import { type Dataset, datasetCache, HealthData, Kernels, preparedPerDataset } from "../../src/plugin/experimental.ts"
import { confidenceOf, publishedEvidence, reasoningChain, suggestionsFor } from "./answer.ts"
import { encounterOffsets, type Evidence, evidenceWindow, gatherEvidence, INTERACTIONS } from "./evidence.ts"
import type { ClinicalRequest, ClinicalResponse } from "./schema.ts"
import { phraseTable, type PhraseTable, understand, understoodAnything } from "./understand.ts"

/** What depends only on the dataset, built once when it loads (the plugin's `prepare`). */
interface Prepared {
  readonly phrases: PhraseTable
  readonly encounterOffsets: Int32Array
}
const prepared = preparedPerDataset<Prepared>("clinical phrase table and encounter index")

/** Builds the phrase table of the dataset's vocabularies and the per-patient encounter offsets. */
export const prepareClinical = (dataset: Dataset) =>
  prepared.store(dataset, Effect.sync(() => ({ phrases: phraseTable(dataset.vocabulary), encounterOffsets: encounterOffsets(dataset) })))

/** Evidence per dataset, keyed by what it depends on (not by the wording of the question). */
const evidenceCache = datasetCache<Evidence>(256)

/**
 * Answers per dataset, keyed by the request as decoded (every field): the text of a repeated question is not
 * written again (reading the question and writing its reasoning are most of a warm answer). Kept
 * with the bases of its figures, replayed into every request it answers (datasetCache).
 */
const answerCache = datasetCache<typeof ClinicalResponse.Type>(1024)

/** Answers one request. */
export const clinical = (request: typeof ClinicalRequest.Type) =>
  Effect.gen(function*() {
    const data = yield* (yield* HealthData).dataset
    return yield* answerCache(data, JSON.stringify(request), answer(request))
  })

/** Reads the question, gathers the evidence and writes the answer. */
const answer = (request: typeof ClinicalRequest.Type) =>
  Effect.gen(function*() {
    const kernels = yield* Kernels
    const health = yield* HealthData
    const data = yield* health.dataset
    const { phrases, encounterOffsets: offsets } = yield* prepared.get(data)
    const u = understand(request.query, phrases)
    if (!understoodAnything(u)) {
      return yield* fail(
        "query_not_understood",
        "The query names no drug, condition, axis or direction this dataset knows (see the catalog's vocabularies drug and condition, and the axes).",
        { suggestions: [...new Set(u.unknown.map((x) => x.closest))] }
      )
    }
    const axes = canonicalOrder(request.axes)
    const window = evidenceWindow(data, request.time_range, u)
    const key = JSON.stringify([u.drugs, u.conditions, u.axes, window.from, axes])
    const cells = yield* Disclosure
    const evidence = yield* evidenceCache(data, key, Effect.orDie(gatherEvidence(kernels, health, data, offsets, u, axes, window, cells.minimum)))
    // Small cells never reach the text: an axis trend resting on too few patients is withheld before the answer is written.
    const e: Evidence = publishedEvidence({ ...evidence, window }, cells)
    // The correlations rest on the patients they run across; the encounters count is declared a count.
    cells.rests("/contributing_data/axis_correlations/*", e.correlationPatients)
    const response: typeof ClinicalResponse.Type = {
      reasoning_chain: reasoningChain(data, u, e, axes, request.response_format, INTERACTIONS.length, cells),
      suggestions: suggestionsFor(u, e, cells),
      confidence: confidenceOf(u, e, cells).value,
      contributing_data: {
        encounters: e.encounters,
        axis_correlations: Object.fromEntries(Object.entries(e.correlations).map(([k, v]) => [k, roundTo(v, 3)]))
      }
    }
    return response
  })
