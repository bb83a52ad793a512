/**
 * The words a view's specification gets from the host (src/plugin/view.ts): values written into
 * its description and text titles by pointer and format, and the line naming the small-cell rule
 * and its threshold wherever an answer withholds a value. The Python client's twin is held to the
 * same output in test/client/python.test.ts.
 */
import { describe, expect, it } from "vitest"
import { chartSpec, describe as write, type PluginView, viewSpec, withheldLine } from "../../src/plugin/view.ts"

const request = { horizon: "90_days", n: 1234567 }
const answer = { probability: 0.01385, low: -0.125, withheld: null, rate: 0.0475, list: ["a", "b"], flag: true }

describe("a description's values", () => {
  it("are written in by pointer, with thousands, fixed digits or per cent, ties away from zero", () => {
    expect(write("{/request/horizon}", request, answer)).toBe("90_days")
    expect(write("{/request/n|,}", request, answer)).toBe("1,234,567")
    expect(write("{/answer/probability|.1%}", request, answer)).toBe("1.4%")
    expect(write("{/answer/rate|.2%}", request, answer)).toBe("4.75%")
    expect(write("{/answer/low|.2}", request, answer)).toBe("-0.13")
    expect(write("{/answer/probability|.3f}", request, answer)).toBe("0.014")
    expect(write("{/answer/list} {/answer/flag}", request, answer)).toBe('["a","b"] true')
  })

  it("say a withheld value is withheld and an absent one not given, or the text the view gives for it", () => {
    expect(write("{/answer/withheld|.2}", request, answer)).toBe("withheld")
    expect(write("{/answer/nothing}", request, answer)).toBe("not given")
    expect(write("{/request/interval?monthly} steps", request, answer)).toBe("monthly steps")
    expect(write("{/request/horizon?monthly}", request, answer)).toBe("90_days")
  })
})

describe("a chart's specification", () => {
  const view: PluginView = {
    version: 1,
    data: {},
    spec: {
      description: "Risk {/answer/probability|.1%} within {/request/horizon}",
      title: { text: { expr: "'{/answer/probability}'" } },
      encoding: { x: { field: "x", type: "quantitative", title: "Days ({/request/horizon})" } },
      mark: "point"
    }
  }

  it("has its description and text titles written in, never its expressions", () => {
    const spec = viewSpec(view, request, answer) as any
    expect(spec.description).toBe("Risk 1.4% within 90_days")
    expect(spec.encoding.x.title).toBe("Days (90_days)")
    expect(spec.title.text).toEqual({ expr: "'{/answer/probability}'" })
    expect(spec.title.subtitle).toBeUndefined()
  })

  it("says, where the answer withholds values, how many and the rule with its threshold", () => {
    const withheld = { ...answer, suppressed: ["/withheld", "/other"] }
    expect(withheldLine(withheld, 11)).toBe("Withheld: 2 values rest on fewer than 11 patients (the small-cell rule)")
    expect(withheldLine({ suppressed: ["/x"] })).toBe("Withheld: 1 value rests on fewer patients than the minimum cell size (the small-cell rule)")
    expect(withheldLine(answer, 11)).toBeUndefined()
    // The view data's withheld fields are listed in view_data.suppressed: counted too.
    expect(withheldLine({ suppressed: ["/a"], view_data: { suppressed: ["/view_data/weeks/4/human", "/view_data/weeks/9/human"] } }, 11)).toBe(
      "Withheld: 3 values rest on fewer than 11 patients (the small-cell rule)"
    )
    const spec = chartSpec(view, request, withheld, 20) as any
    expect(spec.title).toEqual({ text: { expr: "'{/answer/probability}'" }, subtitle: ["Withheld: 2 values rest on fewer than 20 patients (the small-cell rule)"] })
  })
})
