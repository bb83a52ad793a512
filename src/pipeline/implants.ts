/** Implants of an import, their studies and outcomes (docs/data.md, "Importing FHIR and OMOP"). */
import { formatDate } from "../health/calendar.ts"
import type { Row, Rows } from "../health/healthTables.ts"
import { DEFAULT_VOCABULARY } from "../health/vocabulary.ts"
import type { StagedFacts } from "./Staging.ts"

/** Days after an implant in which a revision or complication counts towards its rate metrics. */
export const FOLLOW_UP_DAYS = 365
/** Two records of the same patient's implant of one category this close are one implant. */
export const SAME_IMPLANT_DAYS = 7

/**
 * Implants (procedures of an implant category, or whose focal device is of one), grouped into
 * studies by the organization that performed them (the procedure's performer, else its
 * encounter's service provider), and their outcomes: the source's own outcome observations, else
 * for each rate metric 1 when a revision or complication of the category happened to the patient
 * within FOLLOW_UP_DAYS of the implant, 0 otherwise. Follow-up ends at death, at the end of the
 * patient's last observation period (OMOP) or at as_of, whichever comes first, and no later event
 * counts. A patient lost to follow-up (dead or no longer observed) before the year is out, without
 * the event, has no known outcome for that metric: left out and counted, never a 0, which would
 * bias every rate down. as_of does not make an outcome unknown: a recent implant's outcome is its
 * outcome so far, which is what a question about recent implants asks.
 */
export const implantsOf = (s: StagedFacts, asOfDay: number): Rows => {
  const deviceOf = new Map((s.db.prepare("SELECT src, device FROM device WHERE device IS NOT NULL").all() as Array<{ readonly src: string; readonly device: string }>).map((d) => [d.src, d.device]))
  const encounterOrg = s.db.prepare("SELECT org FROM encounter WHERE src = ? LIMIT 1")
  const patientRegion = s.db.prepare("SELECT region FROM patient WHERE idx = ?")
  interface Implant {
    readonly src: string
    readonly type: string
    readonly patient: number
    readonly device: string
    readonly day: number
    readonly org: string
  }
  const implants: Array<Implant> = []
  const daysOf = new Map<string, ReadonlyArray<number>>()
  for (const r of s.db.prepare("SELECT src, type, patient, device, devices, day, org, encounter FROM procedure ORDER BY f, l").all() as Array<Record<string, string | number | null>>) {
    const device = (r.device as string | null) ?? (JSON.parse(String(r.devices)) as Array<string>).map((d) => deviceOf.get(d)).find((d) => d !== undefined)
    if (device === undefined) {
      s.report.note("Procedure whose focal device is of no implant category: left out")
      continue
    }
    const viaEncounter = r.encounter === null ? null : (encounterOrg.get(String(r.encounter)) as { readonly org: string | null } | undefined)?.org ?? null
    const org = s.organizationOf(r.org as string | null) ?? s.organizationOf(viaEncounter) ?? ""
    const implant = { src: String(r.src), type: String(r.type), patient: Number(r.patient), device, day: Number(r.day), org }
    // One implant recorded twice (a procedure and a device exposure, say) is counted once.
    const key = `${implant.patient}|${device}`
    const days = daysOf.get(key) ?? []
    if (days.some((d) => Math.abs(d - implant.day) <= SAME_IMPLANT_DAYS)) {
      s.report.note(`implant recorded again within ${SAME_IMPLANT_DAYS} days: counted once`)
      continue
    }
    daysOf.set(key, [...days, implant.day])
    implants.push(implant)
  }
  const categories = new Map<string, Set<string>>()
  for (const i of implants) categories.set(i.org, (categories.get(i.org) ?? new Set()).add(i.device))
  const studyOf = (i: Implant) => i.org === "" ? `unknown_organization/${i.device}` : categories.get(i.org)!.size === 1 ? i.org : `${i.org}/${i.device}`
  const studies = new Map<string, Row>()
  const studySources: Array<Row> = []
  for (const i of implants) {
    const id = studyOf(i)
    if (studies.has(id)) continue
    const region = s.organizations.get(i.org)?.region ?? (patientRegion.get(i.patient) as { readonly region: string }).region
    studies.set(id, [id, i.device, region])
    if (i.org !== "") studySources.push(["device_studies", id, `${s.format === "omop" ? "care_site" : "Organization"}/${i.org}`])
  }
  const outcomeOf = s.db.prepare("SELECT metric, value FROM outcome WHERE implant = ?")
  const eventsOf = s.db.prepare("SELECT metric, devices FROM device_event WHERE patient = ? AND day BETWEEN ? AND ?")
  const deathOf = s.db.prepare("SELECT death FROM patient WHERE idx = ?")
  const observedUntil = s.db.prepare("SELECT max(finish) AS finish FROM observed WHERE patient = ?")
  /** The day a patient is lost to follow-up: death or the end of their last observation period (Infinity: neither). */
  const lostAt = (patient: number): number => {
    const death = (deathOf.get(patient) as { readonly death: number | null } | undefined)?.death ?? null
    const observed = (observedUntil.get(patient) as { readonly finish: number | null } | undefined)?.finish ?? null
    return Math.min(death ?? Infinity, observed ?? Infinity)
  }
  const rateMetrics = DEFAULT_VOCABULARY.device_metric.map((m) => m.code).filter((m) => m.endsWith("_rate"))
  const implantRows: Array<Row> = []
  const outcomeRows: Array<Row> = []
  const sources: Array<Row> = []
  implants.forEach((i, k) => {
    const id = k + 1
    implantRows.push([id, i.patient + 1, i.device, studyOf(i), formatDate(i.day)])
    sources.push(["device_implants", String(id), `${i.type}/${i.src}`])
    const stated = outcomeOf.all(i.src) as Array<{ readonly metric: string; readonly value: number }>
    if (stated.length > 0) {
      for (const o of [...stated].sort((a, b) => (a.metric < b.metric ? -1 : 1))) outcomeRows.push([id, o.metric, o.value])
      return
    }
    const window = Math.min(i.day + FOLLOW_UP_DAYS, asOfDay)
    const lost = lostAt(i.patient)
    const until = Math.min(window, lost)
    const happened = new Set<string>()
    for (const e of eventsOf.all(i.patient, i.day, until) as Array<{ readonly metric: string; readonly devices: string }>) {
      if (e.devices === "" || e.devices.split(",").includes(i.device)) happened.add(e.metric)
    }
    // A device infection or failure is also a complication.
    if (happened.has("infection_rate") || happened.has("device_failure_rate")) happened.add("complication_rate")
    for (const metric of [...rateMetrics].sort()) {
      if (happened.has(metric)) outcomeRows.push([id, metric, 1])
      else if (lost >= window) outcomeRows.push([id, metric, 0])
      else s.report.note(`implant whose patient died or left observation within ${FOLLOW_UP_DAYS} days, without a ${metric.replace(/_rate$/, "").replaceAll("_", " ")}: ${metric} unknown, left out`)
    }
  })
  return {
    device_studies: [...studies.values()].sort((a, b) => (String(a[0]) < String(b[0]) ? -1 : 1)),
    device_implants: implantRows,
    device_outcomes: outcomeRows,
    source_ids: [...studySources, ...sources]
  }
}

