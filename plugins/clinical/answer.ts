/**
 * The clinical answer built from the evidence: every reasoning step states computed facts, in the
 * requested format (structured: `label: values`; natural_language: sentences; sql_like: the SQL
 * that produced the numbers, with its result); suggestions from the documented rules; confidence
 * from evidence size, agreement and understanding. docs/analytics.md#clinical.
 */
import { atLeast, AXIS_NAMES, type DisclosureService, roundTo } from "../../src/plugin/Plugin.ts"
import { type Dataset } from "../../src/plugin/experimental.ts"
import { AXIS_INTERVENTIONS } from "../risk-model/interventions.ts"
import type { AxisEvidence, Evidence } from "./evidence.ts"
import * as Sql from "./sql.ts"
import type { Understanding } from "./understand.ts"

/** The response formats (the catalog's query types). */
export type ResponseFormat = "structured" | "natural_language" | "sql_like"

/** A similar-patient axis mean at least this far below everyone's calls for the axis's intervention. */
export const LEVEL_GAP = 0.5
/** A named drug's adverse event in at least this share of the similar patients calls for a review. */
export const ADVERSE_SHARE = 0.05
/** Evidence of n patients weighs n / (n + EVIDENCE_HALF). */
export const EVIDENCE_HALF = 50
/** Confidence is multiplied by this when part of the query was not understood. */
export const PARTIAL_FACTOR = 0.75

interface Step {
  readonly structured: string
  readonly natural: string
  readonly sql: string
}

/** The small-cell rule as the text uses it. */
export type Cells = Pick<DisclosureService, "minimum" | "small" | "count">

// One formatter for every count: `toLocaleString` builds its formatter again at each call (ECMA-402
// defines it as `new Intl.NumberFormat(locales).format(x)`), the same text.
const EN_US = new Intl.NumberFormat("en-US")
const int = (n: number) => EN_US.format(n)
/** A count as the text may state it: `fewer than 11` for a small cell, else rounded as counts are. */
const count = (c: Cells, n: number) => {
  const published = c.count(n)
  return published === null ? `fewer than ${c.minimum}` : int(published)
}
/** The same in an SQL comment: digits only, as the query returns them. */
const countSql = (c: Cells, n: number) => {
  const published = c.count(n)
  return published === null ? `fewer than ${c.minimum}` : String(published)
}
/** `part` of `whole` as a percentage, unless the part or the rest is a small cell (then in words). */
const share = (c: Cells, part: number, whole: number) =>
  c.small(part) ? `fewer than ${c.minimum}` : c.small(whole - part) ? `all but fewer than ${c.minimum}` : pct(part / whole)

/**
 * The evidence as it may be published: an axis whose trend rests on fewer patients than the
 * minimum cell size (but some) keeps no slope, share or verdict (`withheld`), and its level goes
 * when the patients with a score are that few; that leaves nothing small for the text to state.
 */
export const publishedEvidence = (e: Evidence, c: Cells): Evidence => ({
  ...e,
  axes: e.axes.map((a) => {
    const level = c.small(a.scored) ? Number.NaN : a.level
    if (!c.small(a.n)) return level === a.level ? a : { ...a, level }
    return { ...a, level, n: 0, negative: 0, slope: Number.NaN, halfWidth: Number.NaN, p: Number.NaN, shareDeclining: Number.NaN, verdict: "stable", withheld: true }
  })
})
const signed = (x: number, digits = 3) => `${x >= 0 ? "+" : "−"}${Math.abs(x).toFixed(digits)}`
const pct = (x: number) => `${(100 * x).toFixed(1)} %`
const list = (xs: ReadonlyArray<string>) => (xs.length <= 1 ? xs.join("") : `${xs.slice(0, -1).join(", ")} and ${xs.at(-1)}`)
const words = (code: string) => code.replaceAll("_", " ")
const capital = (s: string) => s.charAt(0).toUpperCase() + s.slice(1)

/** How well the data's verdict on an axis agrees with the direction the query states. */
const agreementOf = (a: AxisEvidence, direction: string): number =>
  a.verdict === direction ? 1 : a.verdict === "stable" || direction === "stable" ? 0.5 : 0

/** The confidence and its parts (documented). */
export const confidenceOf = (u: Understanding, e: Evidence, c: Cells) => {
  // Evidence: the patients behind the named axes' trends; else the similar patients; nothing
  // when the query names neither an axis nor a drug or condition. As published (rounded when
  // counts are), so the stated formula gives the stated value.
  const exact = !e.enough ? 0 : e.axes.length > 0 ? Math.min(...e.axes.map((a) => a.n)) : e.everyone ? 0 : e.similar
  const n = c.count(exact) ?? 0
  const size = n / (n + EVIDENCE_HALF)
  const agreement = u.direction !== undefined && e.axes.length > 0
    ? e.axes.reduce((s, a) => s + agreementOf(a, u.direction!), 0) / e.axes.length
    : 0.5
  const understanding = u.unknown.length > 0 ? PARTIAL_FACTOR : 1
  return { n, size, agreement, understanding, value: roundTo(understanding * size * (0.5 + 0.5 * agreement), 2) }
}

const understoodStep = (u: Understanding): Step => {
  const none = "none"
  const axisNames = u.axes.map((a) => `${a} (${AXIS_NAMES[a]})`)
  const parts = [
    u.drugs.length > 0 ? `the drug${u.drugs.length > 1 ? "s" : ""} ${list(u.drugs)}` : undefined,
    u.conditions.length > 0 ? `the condition${u.conditions.length > 1 ? "s" : ""} ${list(u.conditions.map(words))}` : undefined,
    u.axes.length > 0 ? `the ${list(axisNames)} axis${u.axes.length > 1 ? "es" : ""}` : undefined,
    u.direction !== undefined ? `a ${u.direction} direction` : undefined,
    u.durationText !== undefined ? `a duration of ${u.durationText}` : undefined
  ].filter((p) => p !== undefined)
  const renamed = u.mentions.filter((m) => (m.kind === "drug" || m.kind === "condition") && m.text.replaceAll(" ", "_") !== m.code).map((m) => `'${m.text}' = ${m.code}`)
  const structured = `understood: drugs=${u.drugs.join(",") || none}; conditions=${u.conditions.join(",") || none}; axes=${u.axes.join(",") || none}; ` +
    `direction=${u.direction ?? none}; duration=${u.durationText ?? none}${renamed.length > 0 ? `; read ${renamed.join(", ")}` : ""}`
  const natural = `The query names ${list(parts)}.${renamed.length > 0 ? ` (Read ${list(renamed.map((r) => r.replace(" = ", " as ")))}.)` : ""}`
  return { structured, natural, sql: `-- ${structured}` }
}

const unknownStep = (u: Understanding): Step => {
  const items = u.unknown.map((x) => `'${x.text}' (closest known: ${x.closest})`)
  return {
    structured: `not_understood: ${items.join(", ")}; confidence × ${PARTIAL_FACTOR}`,
    natural: `Part of the query was not understood: ${list(items)}. The answer leaves ${u.unknown.length > 1 ? "them" : "it"} out and its confidence is lowered.`,
    sql: `-- not understood: ${items.join(", ")}; confidence × ${PARTIAL_FACTOR}`
  }
}

const windowStep = (e: Evidence): Step => {
  const w = e.window
  const from = w.basis === "time_range" ? "time_range" : w.basis === "query" ? "the query's duration" : "the default: all data"
  return {
    structured: `window: ${w.firstDay}..${w.lastDay} (${w.label}, from ${from})`,
    natural: `Evidence window: ${w.firstDay} to ${w.lastDay} (${words(w.label)}, from ${from}).`,
    sql: `-- window: month BETWEEN '${w.firstMonth}' AND '${w.lastMonth}', dates BETWEEN '${w.firstDay}' AND '${w.lastDay}'`
  }
}

const cohortStep = (data: Dataset, u: Understanding, e: Evidence, c: Cells): Step => {
  const who = [...u.drugs.map((d) => `a course of ${d}`), ...u.conditions.map((c) => words(c))]
  const [similar, population, encounters] = [count(c, e.similar), count(c, e.population), count(c, e.encounters)]
  const [similarSql, encountersSql] = [countSql(c, e.similar), countSql(c, e.encounters)]
  if (e.everyone) {
    return {
      structured: `similar_patients: all ${population} (no drug or condition named); encounters_in_window=${encounters}`,
      natural: `No drug or condition is named, so the evidence is all ${population} patients; they had ${encounters} encounters in the window.`,
      sql: `${Sql.cohortSql(data, u)}; -- → ${similarSql}\n${Sql.encountersSql(data, u, e.window)}; -- → ${encountersSql}`
    }
  }
  if (!e.enough) {
    // "Fewer than N" when the count itself is a small cell; the count when only the evidence rule holds it back.
    const few = c.small(e.similar) ? capital(similar) : `Only ${similar}`
    return {
      structured: `similar_patients: ${similar} with ${who.join(" + ")} (fewer than ${e.minimumSimilar}: no data evidence reported)`,
      natural: `${few} of ${population} patients have ${list(who)}: fewer than ${e.minimumSimilar}, so no data evidence about them is reported.`,
      sql: `${Sql.cohortSql(data, u)}; -- → ${similarSql} (< ${e.minimumSimilar}: not reported further)`
    }
  }
  return {
    structured: `similar_patients: ${similar} of ${population} with ${who.join(" + ")}; encounters_in_window=${encounters}`,
    natural: `${similar} of ${population} patients have ${list(who)}; they had ${encounters} encounters in the window.`,
    sql: `${Sql.cohortSql(data, u)}; -- → ${similarSql}\n${Sql.encountersSql(data, u, e.window)}; -- → ${encountersSql}`
  }
}

const axisStep = (data: Dataset, u: Understanding, e: Evidence, a: AxisEvidence, c: Cells): Step => {
  const group = e.everyone ? "all patients" : "similar patients"
  // No patient of the group has three scores of the axis in the window (an imported dataset may
  // have no instrument for it at all), or fewer than the minimum cell size do: say so, claim no
  // trend or verdict (and no level when the patients with a score are that few).
  if (a.withheld === true) {
    const level = Number.isNaN(a.level) ? `the level of ${count(c, a.scored)} patients not reported` : `level=${a.level.toFixed(2)}`
    return {
      structured: `${a.axis}: too few scores to judge (${level}; fewer than ${c.minimum} with 3 scores in the window); verdict=no_data`,
      natural: `${a.axis} (${AXIS_NAMES[a.axis]}): fewer than ${c.minimum} of the ${group} have 3 scores of it in the window, too few to publish, so nothing is said about its trend.`,
      sql: `${Sql.slopeSql(data, u, a.axis, e.window)}; -- → fewer than ${c.minimum} patients with 3 scores: too few scores to judge ${a.axis} by`
    }
  }
  if (a.n === 0) {
    const level = Number.isNaN(a.level) ? (a.scored > 0 ? `the level of ${count(c, a.scored)} patients not reported, none with 3 scores` : "no scores") : `level=${a.level.toFixed(2)}, none with 3 scores`
    return {
      structured: `${a.axis}: no scores to judge (${level} in the window; n=0); verdict=no_data`,
      natural: `${a.axis} (${AXIS_NAMES[a.axis]}): the ${group} have no scores of it to judge in the window${a.scored > 0 ? " (none has 3)" : ""}, so nothing is said about it.`,
      sql: `${Sql.slopeSql(data, u, a.axis, e.window)}; -- → 0 patients with 3 scores: no scores to judge ${a.axis} by`
    }
  }
  const stated = u.direction === undefined ? "" : a.verdict === u.direction ? `; query says ${u.direction}: confirmed` : `; query says ${u.direction}: not confirmed`
  const ci = Number.isNaN(a.halfWidth) ? "" : ` (95 % CI ${signed(a.slope - a.halfWidth)} to ${signed(a.slope + a.halfWidth)}, p=${a.p < 0.001 ? "<0.001" : a.p.toFixed(3)})`
  const level = Number.isNaN(a.level) ? "not reported" : a.level.toFixed(2)
  const [declining, everyoneDeclining] = [share(c, a.negative, a.n), share(c, a.populationNegative, a.populationN)]
  const structured = `${a.axis}: level=${level} (all ${a.populationLevel.toFixed(2)}); slope=${signed(a.slope)}/month${ci}; n=${count(c, a.n)}; ` +
    `declining_share=${declining} (all ${everyoneDeclining}); verdict=${a.verdict}${stated}`
  const natural = `${a.axis} (${AXIS_NAMES[a.axis]}) in the ${group}: mean score ${level} against ${a.populationLevel.toFixed(2)} for all patients; ` +
    `the ${count(c, a.n)} with at least 3 scores change by ${signed(a.slope)} points a month on average${ci}, and ${declining} of them decline ` +
    `(${everyoneDeclining} of all patients), so ${a.axis} is ${a.verdict} in these patients` +
    (u.direction === undefined ? "." : a.verdict === u.direction ? `, as the query says.` : `, not ${u.direction} as the query says.`)
  const sql = `${Sql.levelSql(data, u, a.axis, e.window)}; -- → ${Number.isNaN(a.level) ? "not reported" : a.level.toFixed(4)}\n${Sql.slopeSql(data, u, a.axis, e.window)}; -- → ${countSql(c, a.n)}, ${a.slope.toFixed(5)} (verdict ${a.verdict}${stated})`
  return { structured, natural, sql }
}

const interactionStep = (pair: readonly [string, string], found: Evidence["interactions"][number]["found"], total: number): Step => {
  if (found === undefined) {
    return {
      structured: `interaction: ${pair.join("+")} none listed (${total} curated pairs)`,
      natural: `The interaction knowledge base (${total} curated pairs) lists no interaction between ${pair[0]} and ${pair[1]}.`,
      sql: `SELECT severity FROM drug_interactions WHERE drugs = ('${pair[0]}', '${pair[1]}'); -- knowledge base plugins/clinical/interactions.json → no row`
    }
  }
  return {
    structured: `interaction: ${pair.join("+")} severity=${found.severity}; mechanism=${found.mechanism}; source=${found.source}`,
    natural: `${capital(pair[0])} and ${pair[1]} interact (${found.severity}): ${found.mechanism} (source: ${found.source}).`,
    sql: `SELECT severity, mechanism, source FROM drug_interactions WHERE drugs = ('${pair[0]}', '${pair[1]}'); -- knowledge base plugins/clinical/interactions.json → ${found.severity}: ${found.mechanism}`
  }
}

const adverseStep = (data: Dataset, u: Understanding, e: Evidence, c: Cells): Step => {
  const among = (x: Evidence["adverse"][number]) => c.small(x.patients) || c.small(e.similar - x.patients) ? share(c, x.patients, e.similar) : `${count(c, x.patients)} (${pct(x.patients / e.similar)})`
  const items = e.adverse.map((x) => `${x.drug} ${x.event} ${among(x)}`)
  const none = items.length === 0
  return {
    structured: `adverse_events: ${none ? "none recorded" : items.join(", ")} among ${count(c, e.similar)} in the window`,
    natural: none
      ? `No adverse event of ${list(u.drugs)} is recorded for these patients in the window.`
      : `Adverse events of the named drugs among these patients in the window: ${list(e.adverse.map((x) => `${words(x.event)} on ${x.drug} in ${among(x)}`))}.`,
    sql: `${Sql.adverseSql(data, u, e.window)}; -- → ${none ? "no rows" : e.adverse.map((x) => `(${x.drug}, ${x.event}, ${countSql(c, x.patients)})`).join(" ")}`
  }
}

const correlationStep = (data: Dataset, u: Understanding, e: Evidence, axes: ReadonlyArray<string>, c: Cells): Step => {
  const entries = Object.entries(e.correlations)
  const pairs = `${entries.length} pair${entries.length === 1 ? "" : "s"}`
  const over = e.correlationOverEveryone ? `all ${count(c, e.correlationPatients)} patients` : `the ${count(c, e.correlationPatients)} similar patients`
  const missing = axes.filter((a) => !entries.some(([k]) => k.split("_").includes(a)))
  if (entries.length === 0) {
    return {
      structured: `axis_correlations: none of ${axes.join(",")} over ${over} (no scores of ${missing.join(",")} to correlate)`,
      natural: `No correlation between the requested axes can be given across ${over}: there are no scores of ${list(missing)} to correlate.`,
      sql: `${Sql.meansSql(data, u, axes as ReadonlyArray<AxisEvidence["axis"]>, e.window, e.correlationOverEveryone)}; -- no column pair with scores in both: no correlation`
    }
  }
  const strongest = entries.reduce((b, c) => (Math.abs(c[1]) > Math.abs(b[1]) ? c : b))
  return {
    structured: `axis_correlations: ${pairs} of ${axes.join(",")} over ${over}; strongest ${strongest[0]} r=${strongest[1].toFixed(3)}`,
    natural: `Across ${over}, mean scores in the window correlate most strongly between ${strongest[0].replace("_", " and ")} (r = ${strongest[1].toFixed(3)}), of ${pairs} of the requested axes.`,
    sql: `${Sql.meansSql(data, u, axes as ReadonlyArray<AxisEvidence["axis"]>, e.window, e.correlationOverEveryone)}; -- Pearson r of each column pair (WASM correlationMatrix) → ${entries.map(([k, v]) => `${k} ${v.toFixed(3)}`).join(", ")}`
  }
}

/** The suggestion rules (docs/analytics.md#clinical), in this order. */
export const suggestionsFor = (u: Understanding, e: Evidence, c: Cells): Array<string> => {
  const out: Array<string> = []
  for (const { pair, found } of e.interactions) {
    if (found !== undefined) out.push(`${capital(found.monitoring)} (${pair.join(" + ")}: ${found.severity} interaction).`)
  }
  if (!e.everyone && !e.enough) {
    out.push(`Too few similar patients (${count(c, e.similar)}) for suggestions from data: ask about fewer drugs or conditions.`)
    return out
  }
  for (const a of e.axes) {
    const intervention = words(AXIS_INTERVENTIONS[a.axis])
    if (a.verdict === "declining") out.push(`Offer ${intervention} for ${a.axis}: it declines by ${Math.abs(a.slope).toFixed(3)} points a month in these patients.`)
    else if (atLeast(a.populationLevel - a.level, LEVEL_GAP)) out.push(`Offer ${intervention} for ${a.axis}: these patients score ${(a.populationLevel - a.level).toFixed(2)} points below all patients.`)
    if (u.direction === "declining" && a.n === 0) {
      // No slopes to judge by (none, or too few to publish).
      out.push(`Record ${a.axis} scores: these patients have none to judge the stated decline by.`)
    } else if (u.direction === "declining" && a.verdict !== "declining") {
      out.push(`Confirm the ${a.axis} decline with repeated scores: on average these patients do not decline (${signed(a.slope)} points a month).`)
    }
  }
  for (const x of e.adverse) {
    if (x.patients / e.similar >= ADVERSE_SHARE) {
      const small = c.small(x.patients) || c.small(e.similar - x.patients)
      out.push(`Review ${x.drug} tolerance: ${small ? share(c, x.patients, e.similar) : pct(x.patients / e.similar)} of these patients had ${words(x.event)} in the window.`)
    }
  }
  if (out.length === 0) out.push(`No change indicated by the evidence: keep monitoring ${e.axes.length > 0 ? list(e.axes.map((a) => a.axis)) : "the patient's axes"}.`)
  return out
}

/** The reasoning chain in the requested format, ending with the confidence and its parts. */
export const reasoningChain = (data: Dataset, u: Understanding, e: Evidence, requestedAxes: ReadonlyArray<string>, format: ResponseFormat, totalInteractions: number, cells: Cells): Array<string> => {
  const steps: Array<Step> = [understoodStep(u)]
  if (u.unknown.length > 0) steps.push(unknownStep(u))
  steps.push(windowStep(e), cohortStep(data, u, e, cells))
  const enough = e.everyone || e.enough
  if (enough) for (const a of e.axes) steps.push(axisStep(data, u, e, a, cells))
  if (u.direction !== undefined && u.axes.length === 0) {
    const s = `direction ${u.direction} stated without an axis: not checked`
    steps.push({ structured: s, natural: `The query says ${u.direction} but names no axis, so the direction is not checked.`, sql: `-- ${s}` })
  }
  for (const { pair, found } of e.interactions) steps.push(interactionStep(pair, found, totalInteractions))
  if (enough && u.drugs.length > 0) steps.push(adverseStep(data, u, e, cells))
  if (Object.keys(e.correlations).length > 0) steps.push(correlationStep(data, u, e, requestedAxes, cells))
  const c = confidenceOf(u, e, cells)
  const formula = `${c.understanding} × ${c.n}/(${c.n}+${EVIDENCE_HALF}) × (0.5 + 0.5 × ${c.agreement.toFixed(2)}) = ${c.value.toFixed(2)}`
  steps.push({
    structured: `confidence: ${formula} (understanding × evidence size × agreement)`,
    natural: `Confidence ${c.value.toFixed(2)}: ${int(c.n)} patients of evidence, ${
      u.direction === undefined || e.axes.length === 0
        ? "no stated direction to check"
        : c.agreement === 1
        ? "the data agreeing with the stated direction"
        : c.agreement === 0
        ? "the data contradicting the stated direction"
        : "the data neither confirming nor contradicting the stated direction"
    }${c.understanding < 1 ? ", a partly understood query" : ""}.`,
    sql: `-- confidence = ${formula}`
  })
  const pick = format === "structured" ? "structured" : format === "natural_language" ? "natural" : "sql"
  return steps.map((s) => s[pick])
}
