/**
 * Sites for the network tests: one exported dataset split by patient into several CSV folders
 * (each patient, and every row that hangs off it, in exactly one), each imported as a site's own
 * dataset; and a network file naming the sites.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { HEALTH_TABLES } from "../../src/health/healthTables.ts"
import { tempDataDir } from "./server.ts"

/** A CSV line's fields (double quotes around a field that holds a comma or a quote). */
const fields = (line: string): Array<string> => {
  const out: Array<string> = []
  let field = ""
  let quoted = false
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!
    if (quoted) {
      if (c === "\"" && line[i + 1] === "\"") (field += "\"", i++)
      else if (c === "\"") quoted = false
      else field += c
    } else if (c === "\"") quoted = true
    else if (c === ",") (out.push(field), field = "")
    else field += c
  }
  out.push(field)
  return out
}

/**
 * Splits the CSV export in `folder` into `parts` folders: patient p goes to part p mod `parts`, and
 * a row of any table to the part of the row it references (a patient, an implant); tables that
 * reference no one (the vocabulary, the studies, the surveillance series) go to every part.
 */
export const splitByPatient = (folder: string, parts: number): Array<string> => {
  const outs = Array.from({ length: parts }, () => {
    const dir = join(tempDataDir(), "part")
    mkdirSync(dir)
    return dir
  })
  // Table → the part each of its keys went to (for the tables other rows reference).
  const placed = new Map<string, Map<string, number>>()
  const files = new Set(readdirSync(folder))
  for (const table of HEALTH_TABLES) {
    const file = `${table.name}.csv`
    if (!files.has(file)) continue
    const [header, ...rows] = readFileSync(join(folder, file), "utf8").split("\n").filter((l) => l !== "")
    const columns = fields(header!)
    const reference = table.columns.find((c) => c.references !== undefined && placed.has(c.references) && columns.includes(c.name))
    const partOf = (row: Array<string>): number | undefined =>
      table.name === "patients" ? Number(row[0]) % parts : reference === undefined ? undefined : placed.get(reference.references!)!.get(row[columns.indexOf(reference.name)]!)
    const keys = new Map<string, number>()
    const lines: Array<Array<string>> = outs.map(() => [header!])
    for (const line of rows) {
      const row = fields(line)
      const part = partOf(row)
      if (part === undefined) for (const l of lines) l.push(line)
      else {
        lines[part]!.push(line)
        keys.set(row[0]!, part)
      }
    }
    if (table.name === "patients" || reference !== undefined) placed.set(table.name, keys)
    outs.forEach((dir, i) => writeFileSync(join(dir, file), `${lines[i]!.join("\n")}\n`))
  }
  return outs
}

/** A network file naming `members` (name, base URL, token) with a deadline, in a new folder. */
export const networkFile = (members: ReadonlyArray<{ readonly name: string; readonly url: string; readonly token: string }>, deadlineSeconds = 30): string => {
  const file = join(tempDataDir(), "network.json")
  writeFileSync(file, JSON.stringify({ members, deadline_seconds: deadlineSeconds }, null, 2))
  return file
}
