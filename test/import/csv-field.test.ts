/**
 * The exports' CSV fields and records (src/formats/csv/csvField.ts), read back by the parser the
 * import uses: whatever a text holds comes back as it was, a missing value as an empty field.
 */
import { parse } from "csv-parse/sync"
import { describe, expect, it } from "vitest"
import { csvField, csvRecords } from "../../src/formats/csv/csvField.ts"

describe("csvField", () => {
  it("quotes only text holding a comma, a double quote or a line break, doubling its quotes", () => {
    expect(csvField("plain text")).toBe("plain text")
    expect(csvField("a, b")).toBe('"a, b"')
    expect(csvField('say "hi"')).toBe('"say ""hi"""')
    expect(csvField("two\nlines")).toBe('"two\nlines"')
    expect(csvField("cr\rhere")).toBe('"cr\rhere"')
    expect(csvField("")).toBe("")
  })

  it("writes null and undefined as empty fields and numbers as JavaScript prints them", () => {
    expect(csvField(null)).toBe("")
    expect(csvField(undefined)).toBe("")
    expect(csvField(0.1 + 0.2)).toBe("0.30000000000000004")
    expect(csvField(-12)).toBe("-12")
    expect(csvField(1e21)).toBe("1e+21")
  })

  it("records read back field for field", () => {
    const rows = [["id", "label", "value"], [1, 'Heart "failure", chronic', 2.5], [2, "two\r\nlines", null]]
    const text = csvRecords(rows)
    expect(text.endsWith("\n")).toBe(true)
    expect(parse(text, { relax_column_count: false })).toEqual([["id", "label", "value"], ["1", 'Heart "failure", chronic', "2.5"], ["2", "two\r\nlines", ""]])
  })
})
