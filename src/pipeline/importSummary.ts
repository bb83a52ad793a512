/**
 * What an import reports, on stdout or as `--json`, in a module of its own: `hcc data import`
 * prints it, and every other command loads the CLI without the import pipeline.
 */

/** What the comparison of one derived table found (reconcile.ts), or "empty" when the source's table holds no rows. */
export type Agreement = Readonly<Record<string, number>> | "empty"

/** What an import reports (stdout, or `--json`). */
export interface ImportSummary {
  readonly format: string
  readonly as_of: string
  readonly files: number
  readonly bytes: number
  readonly seconds: number
  /** Records read, by type. */
  readonly read: Readonly<Record<string, number>>
  /** Records of types the importer does not read, by type. */
  readonly skipped: Readonly<Record<string, number>>
  /** Records read but left out on purpose, by reason. */
  readonly left_out: Readonly<Record<string, number>>
  /** How far the import agrees with the source's own DRUG_ERA, CONDITION_ERA and OBSERVATION_PERIOD, where it ships them (reconcile.ts). */
  readonly reconciled: Readonly<Record<string, Agreement>>
  /** Rows left out because they name a person the dataset lacks, by table and column, with their share of the table's rows. */
  readonly orphans: Readonly<Record<string, { readonly rows: number; readonly rate: number }>>
  /** Rows written, by table. */
  readonly rows: Readonly<Record<string, number>>
  /** The codes no concept map took, by how many patients have them (the top 20). */
  readonly unmapped: ReadonlyArray<{ readonly kind: string; readonly code: string; readonly standard: string | null; readonly label: string; readonly patients: number }>
  /** Per axis, the share of patients with a score. */
  readonly axis_coverage: Readonly<Record<string, number>>
  readonly axis_model: string
  /** Seconds each phase took: reading (vocabulary first for OMOP), staging, writing. */
  readonly phases: Readonly<Record<string, number>>
  /** FHIR: the parse threads the files were read on; 0 when a small export was read on the importing thread. */
  readonly parse_threads?: number
}

const share = (part: number, whole: number) => `${part} (${((part / Math.max(1, whole)) * 100).toFixed(1)} %)`

/** The comparison as lines for people. */
export const describeAgreement = (table: string, a: Agreement): string => {
  const name = table.toUpperCase()
  if (a === "empty") return `${name}: the source's table is empty`
  if (table === "drug_era") return `${name}: ${a.eras} eras; ${share(a.same!, a.eras!)} the same here (person, ingredient, start and end), ${share(a.overlapping!, a.eras!)} overlapping one here; ${a.imported} eras here`
  if (table === "condition_era") return `${name}: ${a.pairs} person–condition pairs; ${share(a.held!, a.pairs!)} held here`
  return `${name}: ${share(a.observed!, a.patients!)} of ${a.patients} patients observed; ${share(a.eras_observed!, a.eras!)} of ${a.eras} eras here start within an observation period`
}

/** The summary as text for people. */
export const formatSummary = (s: ImportSummary): string => {
  const list = (o: Readonly<Record<string, number>>) => Object.entries(o).map(([k, v]) => `  ${k}: ${v}`)
  const lines = [
    `imported ${s.rows["patients"] ?? 0} patients from ${s.files} ${s.format.toUpperCase()} file${s.files === 1 ? "" : "s"} (${(s.bytes / 1_048_576).toFixed(1)} MiB) in ${s.seconds} s; as_of ${s.as_of}`,
    "read:",
    ...list(s.read),
    ...(Object.keys(s.skipped).length > 0 ? ["not read (types the service does not use):", ...list(s.skipped)] : []),
    ...(Object.keys(s.left_out).length > 0 ? ["left out:", ...list(s.left_out)] : []),
    ...(Object.keys(s.orphans).length > 0
      ? ["left out, naming a person the data does not hold (table.column: rows, share of the table):", ...Object.entries(s.orphans).map(([c, o]) => `  ${c}: ${o.rows} (${(o.rate * 100).toFixed(1)} %)`)]
      : []),
    "rows:",
    ...list(s.rows),
    `time: ${Object.entries(s.phases).map(([phase, seconds]) => `${phase} ${seconds} s`).join(", ")}${
      s.parse_threads === undefined ? "" : s.parse_threads === 0 ? " (read on this thread)" : ` (read on ${s.parse_threads} parse thread${s.parse_threads === 1 ? "" : "s"})`
    }`,
    ...(Object.keys(s.reconciled).length > 0
      ? ["compared with the tables the source derived itself:", ...Object.entries(s.reconciled).map(([table, a]) => `  ${describeAgreement(table, a)}`)]
      : []),
    `axis coverage (share of patients with a score; axis model ${s.axis_model}):`,
    `  ${Object.entries(s.axis_coverage).map(([a, c]) => `${a} ${(c * 100).toFixed(1)} %`).join(", ")}`,
    ...(s.unmapped.length > 0
      ? ["unmapped codes, imported under their own names (most patients first):", ...s.unmapped.map((u) => `  ${u.kind} ${u.code}${u.standard === null ? "" : ` (${u.standard})`}: ${u.patients} patients`)]
      : [])
  ]
  return lines.join("\n")
}
