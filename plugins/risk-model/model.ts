/**
 * The risk models: one generalized linear model per risk type, fitted on the population once per
 * loaded dataset (the plugin's `prepare`), never per request. Features: an intercept, age, the
 * condition flags with enough cases, and the eight axis means. Each model is also fitted on the
 * patients with an even id and scored on those with an odd id: the held-out AUC, calibration slope
 * and Brier score are logged at start-up and reported in docs/analytics.md. Definitions and
 * formulas: docs/analytics.md#risk-model.
 */
import { Effect } from "effect"
import { atMost, AXES, type Axis, type Dataset, firstDayOfMonth, type GlmFamily, type KernelsService } from "../../src/plugin/Plugin.ts"

/** The risk types, each its own model. */
export const RISK_TYPES = ["hospitalization", "readmission", "health_decline"] as const
export type RiskType = (typeof RISK_TYPES)[number]

/** A readmission is an admission starting 1–30 days after an index admission's discharge. */
export const READMISSION_DAYS = 30
/** Health decline compares the first and the last this-many months of the panel. */
export const DECLINE_BLOCK_MONTHS = 6
/** …and counts as a decline when the mean of any axis falls by at least this many points. */
export const DECLINE_POINTS = 1
/** A condition enters a model when at least this many of its rows have the outcome, and as many do not. */
export const MIN_CONDITION_CELL = 10
/**
 * An axis enters a model when at least this many of its rows have a score of it: an axis no data
 * informs (an imported dataset with no instrument for it) would be a constant column, so it is left
 * out, and a profile's score of it contributes nothing.
 */
export const MIN_AXIS_ROWS = 20
/** Age enters as (age − AGE_CENTRE) / 10; axis means as mean − AXIS_CENTRE. */
export const AGE_CENTRE = 60
export const AXIS_CENTRE = 5

const DAYS_PER_YEAR = 365.25
const DAYS_PER_MONTH = 30.4375
/** Encounter kind code of an inpatient stay (the dataset's encounter_kind vocabulary order). */
export const INPATIENT = 2

/** Held-out performance: fitted on even patient ids, scored on odd ones. */
export interface Validation {
  readonly rows: number
  readonly events: number
  /** Area under the ROC curve of the predicted probability (Mann–Whitney, ties counted half). */
  readonly auc: number
  /** Slope and intercept of the logistic recalibration of the outcome on logit(predicted); 1 and 0 when calibrated. */
  readonly calibrationSlope: number
  readonly calibrationIntercept: number
  /** Mean squared difference between predicted probability and outcome. */
  readonly brier: number
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

/** One model's training rows: the patient of each row, its outcome and (for rates) log exposure. */
interface Rows {
  readonly patient: Int32Array
  readonly y: Float64Array
  readonly offset: Float64Array
  /** nAxes × nPatients axis means the features read (NaN = no score). */
  readonly axisMeans: Float64Array
}

/** Per-patient inputs shared by the models. */
interface Base {
  readonly n: number
  readonly age: Float64Array
  /** First day of the patient's first scored month (NaN: never scored). */
  readonly observedFrom: Float64Array
  readonly windowMeans: Float64Array
}

const allAxes = Int32Array.from(AXES.keys())

/** Per-patient means of every axis over months [from, to) of the panel (WASM panelWindows). */
const windowMeans = (kernels: KernelsService, data: Dataset, from: number, to: number) => {
  const n = data.patients.count
  return Effect.map(
    kernels.panelWindows(data.panel, allAxes, new Int32Array(n).fill(from), new Int32Array(n).fill(to), new Uint8Array(n).fill(1)),
    (r) => r.mean
  )
}

const base = (kernels: KernelsService, data: Dataset) =>
  Effect.gen(function*() {
    const n = data.patients.count
    const asOfYear = Number(data.asOf.slice(0, 4))
    const age = Float64Array.from(data.patients.birthYear.data, (by) => asOfYear - by)
    return { n, age, observedFrom: observedFromOf(data), windowMeans: yield* windowMeans(kernels, data, 0, data.panel.nMonths) } satisfies Base
  })

// The O(rows) loops of the fits are plain functions, not steps of an Effect generator: V8 optimizes
// a running loop (on-stack replacement) only outside a generator.

/** Per patient: the first day of the first month with any axis score (NaN: never scored). */
const observedFromOf = (data: Dataset): Float64Array => {
  const n = data.patients.count
  const observedFrom = new Float64Array(n).fill(Number.NaN)
  const { data: panel, nMonths } = data.panel
  for (let p = 0; p < n; p++) {
    search: for (let m = 0; m < nMonths; m++) {
      for (let a = 0; a < AXES.length; a++) {
        if (!Number.isNaN(panel[(a * n + p) * nMonths + m]!)) {
          observedFrom[p] = firstDayOfMonth(data.firstMonth + m)
          break search
        }
      }
    }
  }
  return observedFrom
}

/** One patient's hospital stay after merging: first admission day and last discharge day. */
export interface Stay {
  readonly patient: number
  readonly start: number
  readonly end: number
}

/**
 * Inpatient stays per patient in start order, overlapping ones merged: a stay that begins on or
 * before the discharge day of the stay being built (a transfer, or a second record of the same
 * hospitalisation) extends it to the later discharge. Encounters are in (patient, start, end) order.
 */
export const mergedStays = (e: Dataset["encounters"]): Array<Stay> => {
  const stays: Array<Stay> = []
  let current: { patient: number; start: number; end: number } | undefined
  for (let i = 0; i < e.patient.length; i++) {
    if (e.kind[i] !== INPATIENT) continue
    const patient = e.patient[i]!
    const start = e.startDay[i]!
    const end = e.endDay[i]!
    if (current !== undefined && current.patient === patient && start <= current.end) {
      current.end = Math.max(current.end, end)
      continue
    }
    if (current !== undefined) stays.push(current)
    current = { patient, start, end }
  }
  if (current !== undefined) stays.push(current)
  return stays
}

/**
 * Hospital stays (overlapping records merged, mergedStays) in observed time, split into index
 * admissions and readmissions: a stay starting 1–30 days after the previous stay's discharge is a
 * readmission, any other an index admission. For each index admission: whether a readmission
 * followed it, and whether its 30 days after discharge lie within the data.
 */
export const admissions = (
  data: Pick<Dataset, "encounters" | "asOfDay"> & { readonly patients?: { readonly deathDay: Float64Array } },
  b: { readonly n: number; readonly observedFrom: Float64Array }
) => {
  const deathDay = data.patients?.deathDay ?? new Float64Array(b.n).fill(Number.NaN)
  const indexCount = new Float64Array(b.n)
  const readmissionRows: Array<{ patient: number; readmitted: boolean }> = []
  const stays = mergedStays(data.encounters)
  for (let i = 0; i < stays.length; i++) {
    const { end, patient: p, start } = stays[i]!
    const previous = i > 0 && stays[i - 1]!.patient === p ? stays[i - 1]! : undefined
    const gap = previous === undefined ? Number.NaN : start - previous.end
    if (gap >= 1 && gap <= READMISSION_DAYS) continue
    if (!(start >= b.observedFrom[p]!)) continue
    indexCount[p]! += 1
    // The 30 days after discharge must lie within the data and the patient's life (death is a
    // competing risk: a patient who died within them could not be readmitted).
    if (end + READMISSION_DAYS > Math.min(data.asOfDay, deathDay[p]! >= 0 ? deathDay[p]! : Number.POSITIVE_INFINITY)) continue
    const next = i + 1 < stays.length && stays[i + 1]!.patient === p ? stays[i + 1]! : undefined
    const d = next === undefined ? Number.NaN : next.start - end
    readmissionRows.push({ patient: p, readmitted: d >= 1 && d <= READMISSION_DAYS })
  }
  return { indexCount, readmissionRows }
}

/**
 * The health-decline outcome of each patient with some axis scored in both blocks: 1 when the mean
 * of any axis falls by at least DECLINE_POINTS (compared with the score tolerance, so a fall of
 * exactly 1.0 counts). first, last: AXES.length × n block means, axis-major (NaN = not scored).
 */
export const declineOutcomes = (first: Float64Array, last: Float64Array, n: number): { readonly patients: Array<number>; readonly outcome: Array<number> } => {
  const patients: Array<number> = []
  const outcome: Array<number> = []
  for (let p = 0; p < n; p++) {
    let compared = 0
    let declined = false
    for (let a = 0; a < AXES.length; a++) {
      const change = last[a * n + p]! - first[a * n + p]!
      if (Number.isNaN(change)) continue
      compared++
      if (atMost(change, -DECLINE_POINTS)) declined = true
    }
    if (compared === 0) continue
    patients.push(p)
    outcome.push(declined ? 1 : 0)
  }
  return { patients, outcome }
}

/** The rows of each model, and the length of the decline interval. */
const modelRows = (kernels: KernelsService, data: Dataset, b: Base) =>
  Effect.gen(function*() {
    const { indexCount, readmissionRows } = admissions(data, b)
    const observed = [...b.observedFrom.keys()].filter((p) => !Number.isNaN(b.observedFrom[p]!))
    const hospitalization: Rows = {
      patient: Int32Array.from(observed),
      y: Float64Array.from(observed, (p) => indexCount[p]!),
      // Time at risk: from the first scored month to as_of, or to death when the patient died first.
      offset: Float64Array.from(observed, (p) => Math.log((Math.min(data.asOfDay, data.patients.deathDay[p]! >= 0 ? data.patients.deathDay[p]! : Number.POSITIVE_INFINITY) - b.observedFrom[p]! + 1) / DAYS_PER_YEAR)),
      axisMeans: b.windowMeans
    }
    const readmission: Rows = {
      patient: Int32Array.from(readmissionRows, (r) => r.patient),
      y: Float64Array.from(readmissionRows, (r) => (r.readmitted ? 1 : 0)),
      offset: new Float64Array(readmissionRows.length),
      axisMeans: b.windowMeans
    }
    const months = data.panel.nMonths
    if (months < 2 * DECLINE_BLOCK_MONTHS) return { hospitalization, readmission, decline: undefined, declineDays: Number.NaN }
    const first = yield* windowMeans(kernels, data, 0, DECLINE_BLOCK_MONTHS)
    const last = yield* windowMeans(kernels, data, months - DECLINE_BLOCK_MONTHS, months)
    const { patients, outcome } = declineOutcomes(first, last, b.n)
    const decline: Rows = { patient: Int32Array.from(patients), y: Float64Array.from(outcome), offset: new Float64Array(patients.length), axisMeans: first }
    return { hospitalization, readmission, decline, declineDays: (months - DECLINE_BLOCK_MONTHS) * DAYS_PER_MONTH }
  })

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

/**
 * The cluster-robust (sandwich) covariance of a GLM's coefficients, clusters = patients (Liang &
 * Zeger 1986; the CR1 small-sample factor G/(G − 1) · (n − 1)/(n − p)): B·M·B with B the model
 * covariance (X'WX)⁻¹ and M = Σ_c u_c u_cᵀ, u_c = Σ over the cluster's rows of x_i (y_i − μ_i)
 * (the canonical-link score). Rows of one patient (several readmission rows) are not independent;
 * this is the covariance every standard error of the models comes from.
 */
export const clusterRobustCovariance = (
  family: GlmFamily, x: Float64Array, y: Float64Array, offset: Float64Array, n: number, p: number,
  beta: Float64Array, bread: Float64Array, cluster: Int32Array
): Float64Array => {
  // Each cluster's score u_c, added to M in the order clusters first appear: one at a time when the
  // clusters come in ascending order (the models' rows are in patient order), else all kept to the end.
  let adjacent = true
  for (let i = 1; i < n && adjacent; i++) adjacent = cluster[i]! >= cluster[i - 1]!
  const slot = adjacent ? undefined : new Map<number, number>()
  const scores = new Float64Array(adjacent ? p : n * p)
  const meat = new Float64Array(p * p)
  /** M += u uᵀ, the lower triangle (mirrored below: u_j·u_k = u_k·u_j exactly); zero terms skipped (exact zeros). */
  const addOuter = (u: Float64Array) => {
    for (let j = 0; j < p; j++) {
      const uj = u[j]!
      if (uj === 0) continue
      for (let k = 0; k <= j; k++) meat[j * p + k]! += uj * u[k]!
    }
  }
  let g = 0
  let current = 0
  for (let i = 0; i < n; i++) {
    let eta = offset[i]!
    for (let j = 0; j < p; j++) eta += x[i * p + j]! * beta[j]!
    const mu = family === "poisson" ? Math.exp(eta) : 1 / (1 + Math.exp(-eta))
    const r = y[i]! - mu
    let at: number
    if (slot === undefined) {
      if (i === 0 || cluster[i] !== current) {
        if (i > 0) addOuter(scores)
        scores.fill(0)
        current = cluster[i]!
        g++
      }
      at = 0
    } else {
      let c = slot.get(cluster[i]!)
      if (c === undefined) slot.set(cluster[i]!, c = g++)
      at = c * p
    }
    for (let j = 0; j < p; j++) scores[at + j]! += x[i * p + j]! * r
  }
  if (slot === undefined) {
    if (n > 0) addOuter(scores)
  } else {
    for (let c = 0; c < g; c++) addOuter(scores.subarray(c * p, (c + 1) * p))
  }
  for (let j = 0; j < p; j++) for (let k = j + 1; k < p; k++) meat[j * p + k] = meat[k * p + j]!
  const factor = g > 1 && n > p ? (g / (g - 1)) * ((n - 1) / (n - p)) : 1
  const bm = new Float64Array(p * p)
  for (let j = 0; j < p; j++) for (let k = 0; k < p; k++) {
    let sum = 0
    for (let l = 0; l < p; l++) sum += bread[j * p + l]! * meat[l * p + k]!
    bm[j * p + k] = sum
  }
  const out = new Float64Array(p * p)
  for (let j = 0; j < p; j++) for (let k = 0; k < p; k++) {
    let sum = 0
    for (let l = 0; l < p; l++) sum += bm[j * p + l]! * bread[l * p + k]!
    out[j * p + k] = factor * sum
  }
  return out
}

/** Predicted probability of at least one event for each row (given its offset). */
const rowProbabilities = (family: GlmFamily, eta: Float64Array, offset: Float64Array) =>
  Float64Array.from(eta, (e, i) => (family === "poisson" ? -Math.expm1(-Math.exp(e + offset[i]!)) : 1 / (1 + Math.exp(-e))))

/** AUC by the Mann–Whitney statistic with average ranks for ties. */
export const auc = (prob: Float64Array, outcome: Float64Array): number => {
  const order = [...prob.keys()].sort((a, b) => prob[a]! - prob[b]!)
  let rankSum = 0
  let positives = 0
  for (let i = 0; i < order.length;) {
    let j = i
    while (j + 1 < order.length && prob[order[j + 1]!] === prob[order[i]!]) j++
    const rank = (i + j) / 2 + 1
    for (let k = i; k <= j; k++) {
      if (outcome[order[k]!]! > 0) {
        rankSum += rank
        positives++
      }
    }
    i = j + 1
  }
  const negatives = order.length - positives
  return positives === 0 || negatives === 0 ? Number.NaN : (rankSum - (positives * (positives + 1)) / 2) / (positives * negatives)
}

/** The recalibration fit's design (intercept, logit of the prediction), the Brier sum and the events. */
const recalibrationDesign = (prob: Float64Array, outcome: Float64Array) => {
  const n = prob.length
  const x = new Float64Array(2 * n)
  let brier = 0
  let events = 0
  for (let i = 0; i < n; i++) {
    const q = Math.min(Math.max(prob[i]!, 1e-9), 1 - 1e-9)
    x[2 * i] = 1
    x[2 * i + 1] = Math.log(q / (1 - q))
    brier += (prob[i]! - outcome[i]!) ** 2
    events += outcome[i]!
  }
  return { x, brier, events }
}

/** Column means of a row-major n × p design, each row adding x / n in row order. */
const columnMeans = (x: Float64Array, n: number, p: number): Float64Array => {
  const means = new Float64Array(p)
  for (let i = 0; i < n; i++) for (let j = 0; j < p; j++) means[j]! += x[i * p + j]! / n
  return means
}

/** Held-out metrics of predicted probabilities against 0/1 outcomes (recalibration fit in WASM). */
const validate = (kernels: KernelsService, prob: Float64Array, outcome: Float64Array) =>
  Effect.gen(function*() {
    const n = prob.length
    const { x, brier, events } = recalibrationDesign(prob, outcome)
    const recalibration = yield* kernels.fitGlm(x, outcome, new Float64Array(n), n, 2, "logistic")
    return {
      rows: n,
      events,
      auc: auc(prob, outcome),
      calibrationSlope: recalibration.beta[1]!,
      calibrationIntercept: recalibration.beta[0]!,
      brier: brier / n
    } satisfies Validation
  })

/** Fits one model on all its rows, and on even ids for the held-out check on odd ids. */
const fitModel = (kernels: KernelsService, data: Dataset, b: Base, riskType: RiskType, family: GlmFamily, rows: Rows, unitDays: number, capDays = Infinity) =>
  Effect.gen(function*() {
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

/** Fits the three models of a dataset (health_decline needs at least 12 panel months). */
export const fitRiskModels = (kernels: KernelsService, data: Dataset) =>
  Effect.gen(function*() {
    const b = yield* base(kernels, data)
    const rows = yield* modelRows(kernels, data, b)
    const models = new Map<RiskType, RiskModel>()
    models.set("hospitalization", yield* fitModel(kernels, data, b, "hospitalization", "poisson", rows.hospitalization, DAYS_PER_YEAR))
    models.set("readmission", yield* fitModel(kernels, data, b, "readmission", "logistic", rows.readmission, READMISSION_DAYS, READMISSION_DAYS))
    if (rows.decline !== undefined) models.set("health_decline", yield* fitModel(kernels, data, b, "health_decline", "logistic", rows.decline, rows.declineDays))
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

/**
 * Probability of the event within `days`: for a yearly rate λ = e^η (constant hazard),
 * 1 − e^(−λ·days/365.25); for a probability q = logistic(η) over `unitDays`, the constant-hazard
 * extension 1 − (1 − q)^(days/unitDays), days capped at capDays. Both never decrease as days grow.
 */
export const probabilityWithin = (model: RiskModel, x: Float64Array, horizonDays: number): number => {
  const days = Math.min(horizonDays, model.capDays)
  let eta = 0
  for (let j = 0; j < x.length; j++) eta += model.beta[j]! * x[j]!
  if (model.family === "poisson") return -Math.expm1(-Math.exp(eta) * (days / model.unitDays))
  const logSurvival = -Math.log1p(Math.exp(eta)) // log(1 − q)
  return -Math.expm1(logSurvival * (days / model.unitDays))
}

/** Each feature's contribution β_j·(x_j − mean_j) to the linear predictor, intercept left out. */
export const contributions = (model: RiskModel, x: Float64Array): Array<{ readonly factor: string; readonly weight: number }> =>
  model.features.flatMap((factor, j) => (factor === "intercept" ? [] : [{ factor, weight: model.beta[j]! * (x[j]! - model.means[j]!) }]))
