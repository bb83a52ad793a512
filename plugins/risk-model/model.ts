/**
 * The risk models: one generalized linear model per risk type, fitted on the population once per
 * loaded dataset (the plugin's `prepare`), never per request. Features: an intercept, age, the
 * condition flags with enough cases, and the eight axis means. Each model is also fitted on the
 * patients with an even id and scored on those with an odd id: the held-out AUC, calibration slope
 * and Brier score are logged at start-up and reported in docs/analytics.md. Definitions and
 * formulas: docs/analytics.md#risk-model.
 */
import * as Effect from "effect/Effect"
import { AXES, type Axis } from "../../src/plugin/Plugin.ts"
import { type Dataset, type GlmFamily, type KernelsService } from "../../src/plugin/experimental.ts"
import { AGE_CENTRE, AXIS_CENTRE, base, type Base, DAYS_PER_YEAR, modelRows, READMISSION_DAYS, type Rows } from "./rows.ts"
import type { RiskType } from "./schema.ts"
import { clusterRobustCovariance, rowProbabilities, validate, type Validation } from "./validation.ts"

export { RISK_TYPES, type RiskType } from "./schema.ts"

export { AGE_CENTRE, AXIS_CENTRE, DECLINE_BLOCK_MONTHS, DECLINE_POINTS, INPATIENT, READMISSION_DAYS } from "./rows.ts"


/** A condition enters a model when at least this many of its rows have the outcome, and as many do not. */
export const MIN_CONDITION_CELL = 10
/**
 * An axis enters a model when at least this many of its rows have a score of it: an axis no data
 * informs (an imported dataset with no instrument for it) would be a constant column, so it is left
 * out, and a profile's score of it contributes nothing.
 */
export const MIN_AXIS_ROWS = 20
/**
 * A model is fitted on at most about this many rows: its design matrix (rows × features, f64, ~180
 * MB at a million rows) is copied into one thread's share of the compute core's 32-bit memory,
 * which the dataset fills most of at ten million patients. A model with more rows is fitted on
 * the rows of a fixed sample of its patients ({@link sampledRows}); up to a million patients,
 * every model has all its rows.
 */
export const MAX_MODEL_ROWS = 1_000_000

/**
 * The rows of a fixed sample of the patients when there are more than `cap`: a patient is in it
 * when a multiplicative hash of its id (Knuth's 2654435761, modulo 2^32) falls below the share
 * cap / rows of 2^32, so every row of a patient goes together (the standard errors are clustered
 * by patient), the sample does not depend on the order of the rows, and it is independent of the
 * even/odd split of the held-out check. At most `cap` rows are returned as they are.
 */
export const sampledRows = (rows: Rows, ids: Int32Array, cap: number = MAX_MODEL_ROWS): Rows => {
  const n = rows.patient.length
  if (n <= cap) return rows
  const below = Math.floor((cap / n) * 2 ** 32)
  const keep: Array<number> = []
  for (let r = 0; r < n; r++) if (Math.imul(ids[rows.patient[r]!]!, 2654435761) >>> 0 < below) keep.push(r)
  return {
    patient: Int32Array.from(keep, (r) => rows.patient[r]!),
    y: Float64Array.from(keep, (r) => rows.y[r]!),
    offset: Float64Array.from(keep, (r) => rows.offset[r]!),
    axisMeans: rows.axisMeans
  }
}

/** One fitted model. */
export interface RiskModel {
  readonly riskType: RiskType
  readonly family: GlmFamily
  /** `intercept`, `age`, condition codes, then axis codes. */
  readonly features: ReadonlyArray<string>
  readonly beta: Float64Array
  /** Standard errors of beta: cluster-robust, clusters = patients (clusterRobustCovariance). */
  readonly se: Float64Array
  /** The cluster-robust covariance of beta (features × features, row-major): a profile's interval comes from it. */
  readonly covariance: Float64Array
  /** Each feature's mean over the fitting rows: what a value missing from a profile is taken to be. */
  readonly means: Float64Array
  /** Days the model's outcome refers to: a yearly rate (365.25), the 30-day readmission window, or the decline interval. */
  readonly unitDays: number
  /** Days after which the probability stops growing: 30 for readmission (a later admission is no readmission), else none. */
  readonly capDays: number
  readonly rows: number
  readonly events: number
  /** Per condition feature: its patients with a row with the outcome, and with a row without (what its weight rests on). */
  readonly conditionPatients: ReadonlyMap<string, readonly [number, number]>
  readonly iterations: number
  readonly validation: Validation
}

/** The three models of one dataset. */
export type RiskModels = ReadonlyMap<RiskType, RiskModel>

/** Conditions with at least MIN_CONDITION_CELL rows with the outcome and as many without. */
const usableConditions = (data: Dataset, rows: Rows): Array<string> =>
  data.vocabulary.condition.filter((code) => {
    const flags = data.patients.conditions.get(code)?.data
    if (flags === undefined) return false
    let withEvent = 0
    let without = 0
    for (let i = 0; i < rows.patient.length; i++) {
      if (flags[rows.patient[i]!] !== 1) continue
      if (rows.y[i]! > 0) withEvent++
      else without++
    }
    return withEvent >= MIN_CONDITION_CELL && without >= MIN_CONDITION_CELL
  })

/** Per condition: how many distinct patients have a row with the outcome, and how many a row without. */
const conditionPatientsOf = (data: Dataset, rows: Rows, conditions: ReadonlyArray<string>): Map<string, readonly [number, number]> =>
  new Map(conditions.map((code) => {
    const flags = data.patients.conditions.get(code)!.data
    const withEvent = new Set<number>()
    const without = new Set<number>()
    for (let i = 0; i < rows.patient.length; i++) {
      const p = rows.patient[i]!
      if (flags[p] !== 1) continue
      if (rows.y[i]! > 0) withEvent.add(p)
      else without.add(p)
    }
    return [code, [withEvent.size, without.size] as const]
  }))

/** A model's design: row-major x (n × p), with each row's outcome, offset and patient (its cluster). */
interface Design {
  readonly features: ReadonlyArray<string>
  readonly x: Float64Array
  readonly p: number
  readonly n: number
  readonly y: Float64Array
  readonly offset: Float64Array
  readonly cluster: Int32Array
}

/** The design matrix of all the rows, in row order, with the features' names. */
const design = (data: Dataset, b: Base, rows: Rows, conditions: ReadonlyArray<string>, axes: ReadonlyArray<number>, axisFill: Float64Array): Design => {
  const features = ["intercept", "age", ...conditions, ...axes.map((a) => AXES[a]!)]
  const p = features.length
  const n = rows.patient.length
  const x = new Float64Array(n * p)
  const flags = conditions.map((c) => data.patients.conditions.get(c)!.data)
  const axesAt = 2 + conditions.length
  for (let r = 0; r < n; r++) {
    const patient = rows.patient[r]!
    const at = r * p
    x[at] = 1
    x[at + 1] = (b.age[patient]! - AGE_CENTRE) / 10
    for (let k = 0; k < flags.length; k++) x[at + 2 + k] = flags[k]![patient]!
    for (let k = 0; k < axes.length; k++) {
      const a = axes[k]!
      const v = rows.axisMeans[a * b.n + patient]!
      x[at + axesAt + k] = (Number.isNaN(v) ? axisFill[a]! : v) - AXIS_CENTRE
    }
  }
  return { features, x, p, n, y: rows.y, offset: rows.offset, cluster: rows.patient }
}

/** The rows of a design that `keep` selects, in order. */
const designRows = (d: Design, keep: (row: number) => boolean): Design => {
  const kept = new Uint8Array(d.n)
  let n = 0
  for (let r = 0; r < d.n; r++) {
    if (!keep(r)) continue
    kept[r] = 1
    n++
  }
  const { p } = d
  const x = new Float64Array(n * p)
  const y = new Float64Array(n)
  const offset = new Float64Array(n)
  const cluster = new Int32Array(n)
  for (let r = 0, to = 0; r < d.n; r++) {
    if (kept[r] === 0) continue
    for (let j = 0; j < p; j++) x[to * p + j] = d.x[r * p + j]!
    y[to] = d.y[r]!
    offset[to] = d.offset[r]!
    cluster[to] = d.cluster[r]!
    to++
  }
  return { ...d, x, n, y, offset, cluster }
}

/** Column means of a row-major n × p design, each row adding x / n in row order. */
const columnMeans = (x: Float64Array, n: number, p: number): Float64Array => {
  const means = new Float64Array(p)
  for (let i = 0; i < n; i++) for (let j = 0; j < p; j++) means[j]! += x[i * p + j]! / n
  return means
}

/** Fits one model on all its rows, and on even ids for the held-out check on odd ids. */
const fitModel = (kernels: KernelsService, data: Dataset, b: Base, maxRows: number, riskType: RiskType, family: GlmFamily, allRows: Rows, unitDays: number, capDays = Infinity) =>
  Effect.gen(function*() {
    const rows = sampledRows(allRows, data.patients.ids, maxRows)
    const conditions = usableConditions(data, rows)
    const scored = new Int32Array(AXES.length)
    const axisFill = Float64Array.from(AXES, (_, a) => {
      let s = 0
      let c = 0
      for (const p of rows.patient) {
        const v = rows.axisMeans[a * b.n + p]!
        if (!Number.isNaN(v)) {
          s += v
          c++
        }
      }
      scored[a] = c
      return c === 0 ? AXIS_CENTRE : s / c
    })
    const axes = [...AXES.keys()].filter((a) => scored[a]! >= MIN_AXIS_ROWS)
    const all = design(data, b, rows, conditions, axes, axisFill)
    const even = (r: number) => data.patients.ids[rows.patient[r]!]! % 2 === 0
    const train = designRows(all, even)
    const test = designRows(all, (r) => !even(r))
    const trained = yield* kernels.fitGlm(train.x, train.y, train.offset, train.n, train.p, family)
    const eta = yield* kernels.linearPredictor(test.x, test.n, test.p, trained.beta)
    const validation = yield* validate(kernels, rowProbabilities(family, eta, test.offset), Float64Array.from(test.y, (v) => (v > 0 ? 1 : 0)))

    const fit = yield* kernels.fitGlm(all.x, all.y, all.offset, all.n, all.p, family)
    const robust = clusterRobustCovariance(family, all.x, all.y, all.offset, all.n, all.p, fit.beta, fit.covariance, all.cluster)
    const means = columnMeans(all.x, all.n, all.p)
    return {
      riskType,
      family,
      features: all.features,
      beta: fit.beta,
      se: Float64Array.from(all.features, (_, j) => Math.sqrt(robust[j * all.p + j]!)),
      covariance: robust,
      means,
      unitDays,
      capDays,
      rows: all.n,
      events: all.y.reduce((s, v) => s + v, 0),
      conditionPatients: conditionPatientsOf(data, rows, conditions),
      iterations: fit.iterations,
      validation
    } satisfies RiskModel
  })

/** Fits the three models of a dataset (health_decline needs at least 12 panel months), each on at most about `maxRows` rows ({@link sampledRows}). */
export const fitRiskModels = (kernels: KernelsService, data: Dataset, maxRows: number = MAX_MODEL_ROWS) =>
  Effect.gen(function*() {
    const b = yield* base(kernels, data)
    const rows = yield* modelRows(kernels, data, b)
    const models = new Map<RiskType, RiskModel>()
    models.set("hospitalization", yield* fitModel(kernels, data, b, maxRows, "hospitalization", "poisson", rows.hospitalization, DAYS_PER_YEAR))
    models.set("readmission", yield* fitModel(kernels, data, b, maxRows, "readmission", "logistic", rows.readmission, READMISSION_DAYS, READMISSION_DAYS))
    if (rows.decline !== undefined) models.set("health_decline", yield* fitModel(kernels, data, b, maxRows, "health_decline", "logistic", rows.decline, rows.declineDays))
    return models as RiskModels
  })

/** A caller's profile, as the model reads it. */
export interface Profile {
  /** Age in years; undefined = the population's mean age. */
  readonly age: number | undefined
  readonly conditions: ReadonlySet<string>
  /** Axis scores; a missing axis takes the population's mean. */
  readonly axes: Readonly<Partial<Record<Axis, number>>>
}

/** The profile's feature vector: what is missing takes the feature's population mean. */
export const profileVector = (model: RiskModel, profile: Profile): Float64Array =>
  Float64Array.from(model.features, (f, j) => {
    if (f === "intercept") return 1
    if (f === "age") return profile.age === undefined ? model.means[j]! : (profile.age - AGE_CENTRE) / 10
    if ((AXES as ReadonlyArray<string>).includes(f)) {
      const v = profile.axes[f as Axis]
      return v === undefined ? model.means[j]! : v - AXIS_CENTRE
    }
    return profile.conditions.has(f) ? 1 : 0
  })

/** The linear predictor η = xᵀβ of a profile. */
const linearPredictor = (model: RiskModel, x: Float64Array): number => {
  let eta = 0
  for (let j = 0; j < x.length; j++) eta += model.beta[j]! * x[j]!
  return eta
}

/**
 * Probability of the event within `days` at linear predictor η: for a yearly rate λ = e^η
 * (constant hazard), 1 − e^(−λ·days/365.25); for a probability q = logistic(η) over `unitDays`,
 * the constant-hazard extension 1 − (1 − q)^(days/unitDays), days capped at capDays. Both never
 * decrease as days or η grow.
 */
const probabilityAt = (model: RiskModel, eta: number, horizonDays: number): number => {
  const days = Math.min(horizonDays, model.capDays)
  if (model.family === "poisson") return -Math.expm1(-Math.exp(eta) * (days / model.unitDays))
  const logSurvival = -Math.log1p(Math.exp(eta)) // log(1 − q)
  return -Math.expm1(logSurvival * (days / model.unitDays))
}

/** Probability of the event within `days` for a profile (probabilityAt of its linear predictor). */
export const probabilityWithin = (model: RiskModel, x: Float64Array, horizonDays: number): number =>
  probabilityAt(model, linearPredictor(model, x), horizonDays)

/**
 * The 95 % interval of a profile's probability within `days`: η ± 1.96·√(xᵀVx), V the coefficients'
 * cluster-robust covariance, carried through probabilityAt, which is increasing in η (the Wald
 * interval on the linear-predictor scale, then transformed: it stays within [0, 1], unlike a
 * delta-method interval on the probability). It says how sure the fitted model is of this profile's
 * risk, not how the model may be misspecified.
 */
export const probabilityInterval = (model: RiskModel, x: Float64Array, horizonDays: number): readonly [number, number] => {
  const p = x.length
  let variance = 0
  for (let i = 0; i < p; i++) {
    let row = 0
    for (let j = 0; j < p; j++) row += model.covariance[i * p + j]! * x[j]!
    variance += x[i]! * row
  }
  const eta = linearPredictor(model, x)
  const half = 1.959963984540054 * Math.sqrt(Math.max(0, variance))
  return [probabilityAt(model, eta - half, horizonDays), probabilityAt(model, eta + half, horizonDays)]
}

/** Each feature's contribution β_j·(x_j − mean_j) to the linear predictor, intercept left out. */
export const contributions = (model: RiskModel, x: Float64Array): Array<{ readonly factor: string; readonly weight: number }> =>
  model.features.flatMap((factor, j) => (factor === "intercept" ? [] : [{ factor, weight: model.beta[j]! * (x[j]! - model.means[j]!) }]))
