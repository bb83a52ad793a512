/**
 * Naming unmapped concepts: many concepts that share one display get distinct, deterministic codes
 * in a number of look-ups linear in their count (a search from " 2" up for each was quadratic),
 * and a display long enough to be cut at 64 characters still gets distinct codes (the cut once
 * removed the number again, and the search never ended).
 */
import { describe, expect, it } from "vitest"
import { nameOf, UniqueNames } from "../../src/pipeline/concepts.ts"

const LONG = "24 HR metformin hydrochloride 500 MG Extended Release Oral Tablet and a long tail"

describe("unique names of unmapped concepts", () => {
  it("a name no other entry has is its display's name; a taken one gets its system and code, then a number", () => {
    const names = new UniqueNames()
    names.take("condition", "hypertension")
    expect(names.name("condition", "Acute bronchitis (disorder)", "snomed", "10509002")).toBe("acute_bronchitis")
    expect(names.name("condition", "Hypertension", "snomed", "1201005")).toBe("hypertension_snomed_1201005")
    expect(names.name("condition", "Hypertension", "snomed", "1201005")).toBe("hypertension_2")
    expect(names.name("condition", "Hypertension", null, null)).toBe("hypertension_3")
    expect(names.name("drug", "Hypertension", null, null)).toBe("hypertension")
  })

  it.each([["a short display", "Fever"], ["a display cut at 64 characters", LONG]])("%s shared by 20,000 concepts: distinct codes of at most 64 characters, linear look-ups", (_, display) => {
    const n = 20_000
    const names = new UniqueNames()
    const codes = Array.from({ length: n }, (_, i) => names.name("condition", display, "snomed", String(1000 + (i % 2))))
    expect(new Set(codes).size).toBe(n)
    expect(codes.every((c) => c.length <= 64 && /^[a-z][a-z0-9_]*$/.test(c))).toBe(true)
    expect(codes[0]).toBe(nameOf(display))
    expect(names.lookups).toBeLessThanOrEqual(3 * n)
    // The same concepts in the same order get the same codes.
    const again = new UniqueNames()
    expect(Array.from({ length: n }, (_, i) => again.name("condition", display, "snomed", String(1000 + (i % 2))))).toEqual(codes)
  })

  it("numbers skip names that other displays already took, still in linear time", () => {
    const names = new UniqueNames()
    for (let i = 2; i < 1000; i++) names.take("condition", `fever_${i}`)
    const codes = Array.from({ length: 2000 }, () => names.name("condition", "Fever", null, null))
    expect(new Set(codes).size).toBe(2000)
    expect(codes.slice(0, 3)).toEqual(["fever", "fever_1000", "fever_1001"])
    expect(names.lookups).toBeLessThanOrEqual(3 * 2000 + 1000)
  })
})
