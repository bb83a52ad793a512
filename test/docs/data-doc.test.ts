/** docs/data.md's reference block is exactly what the code renders (tables, vocabularies, planted truths). */
import { readFileSync } from "node:fs"
import { expect, it } from "vitest"
import { withGeneratedBlock } from "../../src/health/dataDoc.ts"
import { HEALTH_TABLES } from "../../src/health/healthTables.ts"

const doc = readFileSync(new URL("../../docs/data.md", import.meta.url), "utf8")

it("docs/data.md's generated block is up to date (run npm run docs:data)", () => {
  expect(doc).toBe(withGeneratedBlock(doc))
})

it("documents every table and column", () => {
  for (const t of HEALTH_TABLES) {
    expect(doc).toContain(`### ${t.name}`)
    for (const c of t.columns) expect(doc).toContain(`| \`${c.name}\` |`)
  }
})
