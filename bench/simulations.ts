/**
 * The statistical checks of docs/analytics.md, shared by the tests (small runs with assertions) and
 * `npm run bench:stats` (larger runs, printed): device-outcome interval coverage on a dataset and
 * under the generator's own process, and the one-health false-alarm rate under the generator's null.
 */
import * as Effect from "effect/Effect"
import { binomialNormal } from "../plugins/device-outcomes/binomialNormal.ts"
import { implantsInPeriod, poolMetric, studyEstimates } from "../plugins/device-outcomes/pooling.ts"
import { analyzeLead } from "../plugins/one-health/analysis.ts"
import type { Dataset } from "../src/health/HealthData.ts"
import { deviceStudies, surveillanceRows } from "../src/synthetic/generator.ts"
import { Rng } from "../src/synthetic/random.ts"
import { DEVICES, ZOONOTIC_LINKS } from "../src/synthetic/truths.ts"
import type { KernelsService } from "../src/kernels/Kernels.ts"

/** Every device × rate metric with its planted (mean per-study) rate. */
export const RATE_PAIRS = DEVICES.flatMap((d) => Object.entries(d.rates).map(([metric, truth]) => ({ device: d.device, metric, planted: truth.mean })))

/** Coverage of the planted rate by the pooled 95 % intervals on a dataset, every device × rate metric × period. */
export const deviceCoverageOnData = (kernels: KernelsService, data: Dataset, periods: ReadonlyArray<number>) =>
  Effect.gen(function*() {
    let covered = 0
    let total = 0
    let ratioSum = 0
    let ratios = 0
    let inside = true
    for (const months of periods) {
      for (const { device, metric, planted } of RATE_PAIRS) {
        const sel = yield* implantsInPeriod(kernels, data, data.vocabulary.device.indexOf(device), months)
        const studies = yield* studyEstimates(kernels, data, sel.prepared, sel.mask, metric)
        const p = poolMetric(metric, studies)
        inside &&= p.ciLow >= 0 && p.ciHigh <= 1 && p.ciLow <= p.estimate && p.estimate <= p.ciHigh
        const crude = studies.reduce((a, s) => a + s.events, 0) / studies.reduce((a, s) => a + s.n, 0)
        if (crude > 0) {
          ratioSum += p.estimate / crude
          ratios++
        }
        total++
        if (p.ciLow <= planted && planted <= p.ciHigh) covered++
      }
    }
    return { covered, total, meanRatioToCrude: ratioSum / ratios, intervalsInsideUnit: inside }
  })

/** One study: Poisson(perStudy) implants (at least 1), each with the event at `rate`. */
const drawStudy = (rng: Rng, perStudy: number, rate: number) => {
  const n = Math.max(1, rng.poisson(perStudy))
  let events = 0
  for (let i = 0; i < n; i++) if (rng.chance(rate)) events++
  return { events, n }
}

/** Pools each drawn set of studies and tallies how often its interval covers the planted rate and its relative error. */
const coverageTally = () => {
  let covered = 0
  let total = 0
  let relativeError = 0
  return {
    get total() {
      return total
    },
    add: (counts: ReadonlyArray<{ readonly events: number; readonly n: number }>, planted: number) => {
      const p = binomialNormal(counts)
      total++
      relativeError += (p.estimate - planted) / planted
      if (p.ciLow <= planted && planted <= p.ciHigh) covered++
    },
    result: () => ({ covered, total, meanRelativeError: relativeError / total })
  }
}

/**
 * Coverage under the generator's process: for each seed the generator's own study rates, each
 * study's implant count Poisson(perStudy) and its events Binomial(n, the study's rate).
 */
export const deviceCoverageSimulated = (seeds: ReadonlyArray<number>, perStudy: ReadonlyArray<number>) => {
  const tally = coverageTally()
  for (const seed of seeds) {
    const studies = deviceStudies(seed)
    for (const size of perStudy) {
      for (const { device, metric, planted } of RATE_PAIRS) {
        const rng = new Rng(seed, 99, tally.total)
        tally.add(studies.filter((s) => s.device === device).map((s) => drawStudy(rng, size, s.rates[metric as keyof typeof s.rates])), planted)
      }
    }
  }
  return tally.result()
}

/**
 * Coverage when studies disagree: for each seed and device × rate metric, 8 studies whose rates are
 * logit-normal around the planted rate (logit p_s = logit(planted) + τ·z_s, the model's own
 * assumption with between-study SD τ), Poisson(perStudy) implants each; the target is the median
 * study's rate, expit(logit(planted)) = planted.
 */
export const deviceCoverageHeterogeneous = (seeds: ReadonlyArray<number>, perStudy: number, tau: number) => {
  const tally = coverageTally()
  for (const seed of seeds) {
    for (const { planted } of RATE_PAIRS) {
      const rng = new Rng(seed, 98, tally.total)
      const mu = Math.log(planted / (1 - planted))
      tally.add(Array.from({ length: 8 }, () => drawStudy(rng, perStudy, 1 / (1 + Math.exp(-(mu + tau * rng.normal()))))), planted)
    }
  }
  return tally.result()
}

/** One-health under the generator: every animal × human pair of each seed's surveillance data; the unlinked ones count false alarms. */
export const oneHealthUnderGenerator = (kernels: KernelsService, seeds: ReadonlyArray<number>) =>
  Effect.gen(function*() {
    let pairs = 0
    let alarms = 0
    let leads = 0
    let leadsAtLag = 0
    for (const seed of seeds) {
      const rows = surveillanceRows({ seed, patients: 1 })
      const animal = new Map<string, Array<number>>()
      const human = new Map<string, Array<number>>()
      for (const [sp, c, r, , cases] of rows.animal_surveillance!) {
        const key = `${sp}/${c}/${r}`
        animal.set(key, [...(animal.get(key) ?? []), cases as number])
      }
      for (const [c, r, , cases] of rows.human_surveillance!) human.set(`${c}/${r}`, [...(human.get(`${c}/${r}`) ?? []), cases as number])
      for (const [key, cases] of animal) {
        const [species, condition, region] = key.split("/")
        const a = yield* analyzeLead(kernels, Float64Array.from(cases), Float64Array.from(human.get(`${condition}/${region}`)!))
        const link = ZOONOTIC_LINKS.find((l) => l.species === species && l.condition === condition && l.region === region)
        if (link !== undefined) {
          leads++
          if (a.found && a.lagWeeks * 7 === link.lagDays) leadsAtLag++
        } else {
          pairs++
          if (a.found) alarms++
        }
      }
    }
    return { pairs, alarms, leads, leadsAtLag }
  })
