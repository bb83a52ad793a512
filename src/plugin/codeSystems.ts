/**
 * The standard code systems the service knows by name. A vocabulary entry's standard code, a
 * request naming a condition, drug or device by standard code (`snomed:44054006`) and the shipped
 * concept maps all use these short names; an import recognises a system by its FHIR URI
 * (terminology.hl7.org's list of external code systems for FHIR R4) or its OMOP `vocabulary_id`
 * (OMOP CDM 5.4 standardized vocabularies).
 */

/** The shape of a dataset's own vocabulary code: requests accept exactly these (src/plugin/shapes.ts Code). */
export const SNAKE_CASE = { regex: /^[a-z][a-z0-9_]{0,63}$/, name: "a snake_case code" } as const

/** One code system: its short name, its FHIR R4 URI and its OMOP vocabulary_id (when it has them). */
export interface CodeSystem {
  readonly name: string
  readonly title: string
  readonly fhir?: string
  /** Other URIs exports use for the same system (earlier FHIR versions' URIs). */
  readonly fhirAliases?: ReadonlyArray<string>
  readonly omop?: string
}

/** Every system the service names, in the order docs list them. */
export const CODE_SYSTEMS: ReadonlyArray<CodeSystem> = [
  { name: "snomed", title: "SNOMED CT", fhir: "http://snomed.info/sct", omop: "SNOMED" },
  { name: "icd10cm", title: "ICD-10-CM", fhir: "http://hl7.org/fhir/sid/icd-10-cm", omop: "ICD10CM" },
  { name: "icd10", title: "ICD-10 (WHO)", fhir: "http://hl7.org/fhir/sid/icd-10", omop: "ICD10" },
  { name: "icd9cm", title: "ICD-9-CM", fhir: "http://hl7.org/fhir/sid/icd-9-cm", omop: "ICD9CM" },
  { name: "icd10pcs", title: "ICD-10-PCS", fhir: "http://www.cms.gov/Medicare/Coding/ICD10", omop: "ICD10PCS" },
  { name: "cpt", title: "CPT", fhir: "http://www.ama-assn.org/go/cpt", omop: "CPT4" },
  { name: "hcpcs", title: "HCPCS", fhir: "https://www.cms.gov/Medicare/Coding/HCPCSReleaseCodeSets", omop: "HCPCS" },
  { name: "rxnorm", title: "RxNorm", fhir: "http://www.nlm.nih.gov/research/umls/rxnorm", omop: "RxNorm" },
  { name: "atc", title: "ATC (WHO)", fhir: "http://www.whocc.no/atc", omop: "ATC" },
  { name: "ndc", title: "NDC", fhir: "http://hl7.org/fhir/sid/ndc", omop: "NDC" },
  { name: "cvx", title: "CVX", fhir: "http://hl7.org/fhir/sid/cvx", omop: "CVX" },
  { name: "loinc", title: "LOINC", fhir: "http://loinc.org", omop: "LOINC" },
  { name: "actcode", title: "HL7 v3 ActCode (encounter class)", fhir: "http://terminology.hl7.org/CodeSystem/v3-ActCode", fhirAliases: ["http://hl7.org/fhir/v3/ActCode"] },
  { name: "hl7v2_0004", title: "HL7 v2 table 0004, patient class (encounter class)", fhir: "http://terminology.hl7.org/CodeSystem/v2-0004", fhirAliases: ["http://hl7.org/fhir/v2/0004"] },
  { name: "visit", title: "OMOP Visit", omop: "Visit" },
  { name: "omop", title: "OMOP concept_id (for an OMOP dataset without its CONCEPT table)" }
]

/** The short names. */
export const STANDARD_SYSTEM_NAMES: ReadonlyArray<string> = CODE_SYSTEMS.map((s) => s.name)

const byFhir = new Map(CODE_SYSTEMS.flatMap((s) => [...(s.fhir === undefined ? [] : [s.fhir]), ...(s.fhirAliases ?? [])].map((uri) => [uri, s.name] as const)))
const byOmop = new Map(CODE_SYSTEMS.flatMap((s) => (s.omop === undefined ? [] : [[s.omop.toLowerCase(), s.name] as const])))

/** The short name of a FHIR code system URI (a trailing `/` ignored), or undefined. */
export const systemOfFhirUri = (uri: string | undefined): string | undefined =>
  uri === undefined ? undefined : byFhir.get(uri.endsWith("/") ? uri.slice(0, -1) : uri)

/** The short name of an OMOP vocabulary_id (any case), or undefined. */
export const systemOfOmopVocabulary = (vocabularyId: string): string | undefined => byOmop.get(vocabularyId.toLowerCase())

/** The OMOP vocabulary_id of a short name, or undefined. */
export const omopVocabularyOf = (name: string): string | undefined => CODE_SYSTEMS.find((s) => s.name === name)?.omop

/** The FHIR URI of a short name, or undefined. */
export const fhirUriOf = (name: string): string | undefined => CODE_SYSTEMS.find((s) => s.name === name)?.fhir

/**
 * How a request names an entry by standard code: `<system>:<code>`, the system one of
 * {@link STANDARD_SYSTEM_NAMES}, the code as the system writes it (letters, digits, `.` and `-`).
 */
export const STANDARD_NOTATION = new RegExp(`^(${STANDARD_SYSTEM_NAMES.join("|")}):([A-Za-z0-9][A-Za-z0-9.-]{0,39})$`)

/** A standard code. */
export interface StandardCode {
  readonly system: string
  readonly code: string
}

/** `snomed:44054006` → { system, code }, or undefined when the text is not in that notation. */
export const parseStandard = (text: string): StandardCode | undefined => {
  const m = STANDARD_NOTATION.exec(text)
  return m === null ? undefined : { system: m[1]!, code: m[2]! }
}

/** { system, code } → `system:code`. */
export const formatStandard = (s: StandardCode): string => `${s.system}:${s.code}`
