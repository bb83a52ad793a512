/**
 * A second reading of the drug-exposure conventions — OMOP CDM 5.4 DRUG_EXPOSURE and DRUG_ERA,
 * OHDSI THEMIS, ETL-Synthea, FHIR R4, CARIN Blue Button 2.0, PQA's PDC — written from their text
 * alone as an independent check of the importer: exposure rows (OMOP DRUG_EXPOSURE, FHIR R4
 * MedicationRequest / MedicationDispense / CARIN BB pharmacy ExplanationOfBenefit), death, OHDSI
 * drug eras with a 30-day persistence window, PQA proportion of days covered, exposed person-months.
 * The § numbers are those of docs/data.md's "Drug exposure: eras, fills and adherence" (§5 here:
 * exposed person-months). Plain and slow on purpose; dates are UTC day numbers (Date.UTC).
 */

/** Raw CSV rows: lower-case column names, '' for an empty field. */
export type Rows = Array<Record<string, string>>

/** The OMOP CDM tables the reading needs (person and drug_exposure required). */
export type OmopTables = {
  person: Rows
  drug_exposure: Rows
  death?: Rows
  observation_period?: Rows
  concept?: Rows
  concept_ancestor?: Rows
}

/** One drug era of a person and ingredient, with its PDC and the source records it holds. */
export type Era = {
  person: string
  /** RxNorm code (OMOP: concept_code of the ingredient concept). */
  ingredient: string
  start: string
  /** null: ongoing at as_of. */
  end: string | null
  /** PQA PDC over the era, 4 decimals; null when the era holds fewer than two fills. */
  adherence: number | null
  /** Source record ids: OMOP drug_exposure_id, FHIR "Type/id". */
  rows: Array<string>
}

const MS_PER_DAY = 86_400_000

/** The UTC day number of an ISO date or date-time's date part (a partial "YYYY" / "YYYY-MM" is its first day); null when unreadable. */
export const dayNumber = (iso: string | undefined | null): number | null => {
  const m = /^(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?/.exec((iso ?? "").trim())
  return m === null ? null : Date.UTC(Number(m[1]), Number(m[2] ?? "1") - 1, Number(m[3] ?? "1")) / MS_PER_DAY
}

/** The YYYY-MM-DD of a UTC day number. */
export const isoDate = (day: number): string => new Date(day * MS_PER_DAY).toISOString().slice(0, 10)

const mustDay = (iso: string): number => {
  const d = dayNumber(iso)
  if (d === null) throw new Error(`not a date: ${iso}`)
  return d
}

/** One exposure row per ingredient; end null = ongoing; fill = (day, days supply) when it counts for adherence. */
type Exposure = { person: string; ingredient: string; start: number; end: number | null; fill: { day: number; days: number } | null; id: string }

/** Numeric-aware order for ids ("2" before "10"), plain code-unit order otherwise. */
const compareIds = (a: string, b: string): number => {
  if (/^\d+$/.test(a) && /^\d+$/.test(b) && a.length !== b.length) return a.length - b.length
  return a < b ? -1 : a > b ? 1 : 0
}

/** §4: PQA PDC of an era's fills over [start, last]; overlapping fills shifted; null below two fills. */
const pdc = (fills: ReadonlyArray<{ day: number; days: number }>, start: number, last: number): number | null => {
  const days = last - start + 1
  if (fills.length < 2 || days <= 0) return null
  let next = Number.NEGATIVE_INFINITY
  let covered = 0
  for (const f of [...fills].sort((a, b) => a.day - b.day)) {
    const s = Math.max(f.day, next)
    const e = s + f.days - 1
    next = e + 1
    covered += Math.max(0, Math.min(e, last) - Math.max(s, start) + 1)
  }
  return Math.round(Math.min(1, covered / days) * 1e4) / 1e4
}

/** §2–§4 over exposure rows: death drops and caps, eras with a 30-day persistence window, PDC. */
const erasOf = (exposures: ReadonlyArray<Exposure>, deaths: ReadonlyMap<string, number>, asOf: string): Array<Era> => {
  const asOfDay = mustDay(asOf)
  const groups = new Map<string, Array<Exposure>>()
  for (const x of exposures) {
    const death = deaths.get(x.person)
    if (death !== undefined && x.start > death) continue
    const end = death === undefined ? x.end : x.end === null ? death : Math.min(x.end, death)
    const key = JSON.stringify([x.person, x.ingredient])
    const list = groups.get(key) ?? []
    list.push({ ...x, end })
    groups.set(key, list)
  }
  const eras: Array<Era> = []
  for (const list of groups.values()) {
    list.sort((a, b) => a.start - b.start || (a.end ?? Infinity) - (b.end ?? Infinity) || compareIds(a.id, b.id))
    let cur: { start: number; latestEnd: number; rows: Array<Exposure> } | null = null
    const close = () => {
      if (cur === null) return
      const first = cur.rows[0]!
      const fills = cur.rows.flatMap((x) => (x.fill === null ? [] : [x.fill]))
      const end = cur.latestEnd === Infinity ? null : cur.latestEnd
      eras.push({
        person: first.person,
        ingredient: first.ingredient,
        start: isoDate(cur.start),
        end: end === null ? null : isoDate(end),
        adherence: pdc(fills, cur.start, end ?? asOfDay),
        rows: [...new Set(cur.rows.map((x) => x.id))]
      })
    }
    for (const x of list) {
      const end = x.end ?? Infinity
      if (cur !== null && x.start - cur.latestEnd <= 30) {
        cur.rows.push(x)
        cur.latestEnd = Math.max(cur.latestEnd, end)
      } else {
        close()
        cur = { start: x.start, latestEnd: end, rows: [x] }
      }
    }
    close()
  }
  return eras.sort((a, b) => compareIds(a.person, b.person) || compareIds(a.ingredient, b.ingredient) || (a.start < b.start ? -1 : a.start > b.start ? 1 : 0))
}

/** drug_type_concept_ids that record a dispensing (§1 FILL). */
const DISPENSING_TYPES = new Set(["38000175", "38000176", "32869", "32825", "32857"])

/** Drug eras (§1–4) of an OMOP CDM's raw tables; rows of persons not in PERSON are ignored. */
export const omopEras = (cdm: OmopTables, asOf: string): Array<Era> => {
  const asOfDay = mustDay(asOf)
  const persons = new Set(cdm.person.map((p) => p.person_id ?? ""))
  const deaths = new Map<string, number>()
  for (const d of cdm.death ?? []) {
    const day = dayNumber(d.death_date)
    const pid = d.person_id ?? ""
    if (day !== null && persons.has(pid)) deaths.set(pid, Math.min(day, deaths.get(pid) ?? day))
  }
  const periods = new Map<string, Array<[number, number]>>()
  for (const op of cdm.observation_period ?? []) {
    const s = dayNumber(op.observation_period_start_date)
    const e = dayNumber(op.observation_period_end_date)
    if (s === null || e === null) continue
    const pid = op.person_id ?? ""
    periods.set(pid, [...(periods.get(pid) ?? []), [s, e]])
  }
  const concepts = new Map((cdm.concept ?? []).map((c) => [c.concept_id ?? "", c]))
  const ancestors = new Map<string, Array<string>>()
  for (const ca of cdm.concept_ancestor ?? []) {
    const d = ca.descendant_concept_id ?? ""
    ancestors.set(d, [...(ancestors.get(d) ?? []), ca.ancestor_concept_id ?? ""])
  }
  const isIngredient = (id: string) => concepts.get(id)?.concept_class_id === "Ingredient"
  const ingredientsOf = (drug: string): Array<string> => {
    const found = [drug, ...(ancestors.get(drug) ?? [])].filter(isIngredient)
    const ids = found.length === 0 ? [drug] : found
    return [...new Set(ids.map((id) => concepts.get(id)?.concept_code || id))]
  }
  const exposures: Array<Exposure> = []
  for (const row of cdm.drug_exposure) {
    const person = row.person_id ?? ""
    const start = dayNumber(row.drug_exposure_start_date)
    if (!persons.has(person) || start === null) continue
    const endDate = dayNumber(row.drug_exposure_end_date)
    const supply = (row.days_supply ?? "").trim() === "" ? null : Number(row.days_supply)
    const type = (row.drug_type_concept_id ?? "").trim()
    // §2: days_supply exactly 0 (as ETL-Synthea writes it), not an administration record.
    const current = endDate === start && supply === 0 && (row.verbatim_end_date ?? "").trim() === "" && type !== "32818" && type !== "38000180"
    let end: number | null
    if (current) {
      const period = (periods.get(person) ?? []).find(([s, e]) => s <= start && start <= e)
      end = period !== undefined && period[1] < asOfDay ? period[1] : null
    } else if (endDate !== null) end = endDate
    else if (supply !== null && supply > 0) end = start + supply - 1
    // §1, CDM 5.4's inference of a missing end (THEMIS): an administration its day, mail order 90 days, else 30.
    else end = start + (type === "32818" || type === "38000180" ? 0 : type === "38000176" || type === "32857" ? 89 : 29)
    if (end !== null && end < start) end = start
    const fill = DISPENSING_TYPES.has((row.drug_type_concept_id ?? "").trim()) && supply !== null && supply > 0 ? { day: start, days: supply } : null
    for (const ingredient of ingredientsOf((row.drug_concept_id ?? "").trim())) {
      exposures.push({ person, ingredient, start, end, fill, id: row.drug_exposure_id ?? "" })
    }
  }
  return erasOf(exposures, deaths, asOf)
}

const RXNORM = "http://www.nlm.nih.gov/research/umls/rxnorm"
const NDC = "http://hl7.org/fhir/sid/ndc"
const CLAIM_TYPE = "http://terminology.hl7.org/CodeSystem/claim-type"
const C4BB_INFO = "http://hl7.org/fhir/us/carin-bb/CodeSystem/C4BBSupportingInfoType"
const UNIT_DAYS: Record<string, number> = { d: 1, day: 1, days: 1, wk: 7, week: 7, weeks: 7, mo: 30, month: 30, months: 30, a: 365, year: 365, years: 365 }

/** Days of a FHIR Duration / SimpleQuantity (code before unit; no unit = days); null when unreadable. */
const daysOf = (q: any): number | null => {
  const value = typeof q?.value === "number" ? q.value : null
  const unit = String(q?.code ?? q?.unit ?? "d")
  const factor = UNIT_DAYS[unit] ?? UNIT_DAYS[unit.toLowerCase()]
  return value === null || factor === undefined ? null : value * factor
}

/** The id a reference points at ("Patient/x", "urn:uuid:x", ".../Patient/x/_history/1"). */
const refId = (ref: any): string => {
  const r = String(ref?.reference ?? "")
  if (r.startsWith("urn:uuid:")) return r.slice(9)
  const parts = r.split("/")
  const h = parts.indexOf("_history")
  return (h > 0 ? parts[h - 1] : parts[parts.length - 1]) ?? ""
}

const rxnormOf = (cc: any): string | null => (cc?.coding ?? []).find((c: any) => c?.system === RXNORM && c?.code)?.code ?? null

/** Drug eras (§1–4) of parsed FHIR R4 resources; ndcToRxnorm maps an EOB item's NDC to its RxNorm code. */
export const fhirEras = (resources: ReadonlyArray<any>, asOf: string, ndcToRxnorm: Readonly<Record<string, string>> = {}): Array<Era> => {
  const patients = new Set<string>()
  const deaths = new Map<string, number>()
  const medications = new Map<string, any>()
  for (const r of resources) {
    if (r?.resourceType === "Patient") {
      patients.add(String(r.id))
      const d = dayNumber(r.deceasedDateTime)
      if (d !== null) deaths.set(String(r.id), d)
    } else if (r?.resourceType === "Medication") medications.set(String(r.id), r)
  }
  const exposures: Array<Exposure> = []
  const add = (person: string, rx: string | null, start: number | null, end: number | null, fill: Exposure["fill"], id: string) => {
    if (!patients.has(person) || rx === null || start === null) return
    exposures.push({ person, ingredient: rx, start, end: end !== null && end < start ? start : end, fill, id })
  }
  for (const r of resources) {
    const id = `${r?.resourceType}/${r?.id}`
    if (r?.resourceType === "MedicationRequest") {
      if (!["active", "completed", "stopped", "on-hold", "unknown"].includes(r.status)) continue
      const ref = String(r.medicationReference?.reference ?? "")
      const med = ref.startsWith("#") ? (r.contained ?? []).find((c: any) => `#${c.id}` === ref) : medications.get(refId(r.medicationReference))
      const rx = rxnormOf(r.medicationCodeableConcept) ?? rxnormOf(med?.code)
      const bounds = r.dosageInstruction?.[0]?.timing?.repeat?.boundsPeriod
      const start = dayNumber(bounds?.start) ?? dayNumber(r.authoredOn)
      const duration = daysOf(r.dispenseRequest?.expectedSupplyDuration)
      let end: number | null
      if (dayNumber(bounds?.end) !== null) end = dayNumber(bounds?.end)
      else if (start !== null && duration !== null) end = start + duration * (1 + (r.dispenseRequest?.numberOfRepeatsAllowed ?? 0)) - 1
      else if (["active", "on-hold", "unknown"].includes(r.status)) end = null
      else end = start === null ? null : start + 29
      add(refId(r.subject), rx, start, end, null, id)
    } else if (r?.resourceType === "MedicationDispense") {
      if (r.status !== undefined && r.status !== "completed") continue
      const ref = String(r.medicationReference?.reference ?? "")
      const med = ref.startsWith("#") ? (r.contained ?? []).find((c: any) => `#${c.id}` === ref) : medications.get(refId(r.medicationReference))
      const day = dayNumber(r.whenHandedOver)
      const days = daysOf(r.daysSupply)
      if (day === null || days === null || r.daysSupply === undefined) continue
      add(refId(r.subject), rxnormOf(r.medicationCodeableConcept) ?? rxnormOf(med?.code), day, day + days - 1, days > 0 ? { day, days } : null, id)
    } else if (r?.resourceType === "ExplanationOfBenefit") {
      const pharmacy = (r.type?.coding ?? []).some((c: any) => c?.system === CLAIM_TYPE && c?.code === "pharmacy")
      if (!pharmacy || r.status !== "active") continue
      const info = (code: string, item: any) =>
        (r.supportingInfo ?? []).filter((s: any) =>
          (s?.category?.coding ?? []).some((c: any) => c?.system === C4BB_INFO && c?.code === code) &&
          (!Array.isArray(item?.informationSequence) || item.informationSequence.includes(s.sequence))
        )[0]
      for (const item of r.item ?? []) {
        const codings = item?.productOrService?.coding ?? []
        const ndc = codings.find((c: any) => c?.system === NDC)?.code
        const rx = rxnormOf(item?.productOrService) ?? (ndc === undefined ? null : ndcToRxnorm[ndc] ?? null)
        const day = dayNumber(item?.servicedDate) ?? dayNumber(r.billablePeriod?.start)
        const days = info("dayssupply", item)?.valueQuantity?.value
        // A pharmacy claim item without a date or a days supply says nothing of exposure (docs/data.md: left out).
        if (day === null || !(typeof days === "number" && days > 0)) continue
        add(refId(r.patient), rx, day, day + days - 1, { day, days }, id)
      }
    }
  }
  return erasOf(exposures, deaths, asOf)
}

/** §5: distinct (person, ingredient, month) of the 120 months ending with as_of's month in which some era has a day. */
export const exposedPersonMonths = (eras: ReadonlyArray<Era>, asOf: string): number => {
  const monthOf = (iso: string) => Number(iso.slice(0, 4)) * 12 + Number(iso.slice(5, 7)) - 1
  const last = monthOf(asOf)
  const first = last - 119
  const seen = new Set<string>()
  for (const era of eras) {
    const from = Math.max(first, monthOf(era.start))
    const to = Math.min(last, monthOf(era.end ?? asOf))
    for (let m = from; m <= to; m++) seen.add(JSON.stringify([era.person, era.ingredient, m]))
  }
  return seen.size
}

/** A tiny RFC 4180 reader: header row (names lower-cased), commas, quoted fields with "" escapes, CRLF or LF. */
export const readCsv = (text: string): Rows => {
  const records: Array<Array<string>> = []
  let record: Array<string> = []
  let field = ""
  let quoted = false
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0
  for (; i < text.length; i++) {
    const ch = text[i]!
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"'
        i++
      } else if (ch === '"') quoted = false
      else field += ch
    } else if (ch === '"') quoted = true
    else if (ch === ",") {
      record.push(field)
      field = ""
    } else if (ch === "\n" || ch === "\r") {
      if (ch === "\r" && text[i + 1] === "\n") i++
      record.push(field)
      records.push(record)
      record = []
      field = ""
    } else field += ch
  }
  if (field !== "" || record.length > 0) {
    record.push(field)
    records.push(record)
  }
  const [header, ...body] = records.filter((r) => !(r.length === 1 && r[0] === ""))
  if (header === undefined) return []
  const names = header.map((h) => h.trim().toLowerCase())
  return body.map((r) => Object.fromEntries(names.map((n, k) => [n, r[k] ?? ""])))
}
