/**
 * A view (src/plugin/view.ts) drawn in Node: the self-contained Vega-Lite specification compiled
 * to Vega and run headless (`vega`, renderer none), to SVG and to its scenegraph — how the tests
 * check the marks, and how `npm run docs:screenshot` draws the views without a browser.
 */
import * as vega from "vega"
import { compile, type TopLevelSpec } from "vega-lite"
import { chartSpec, type PluginView } from "../plugin/view.ts"

/** A mark item of the scenegraph: its mark type, role and datum. */
export interface DrawnItem {
  readonly marktype: string
  readonly role: string
  readonly datum: Record<string, unknown> | undefined
  /** Text of a text mark. */
  readonly text?: string | undefined
  readonly x?: number | undefined
  readonly y?: number | undefined
  /** Where a vertical band or bar ends (an area's or a rect's y2). */
  readonly y2?: number | undefined
  /** A symbol's area, a trail point's width (pixels). */
  readonly size?: number | undefined
}

interface SceneNode {
  readonly marktype?: string
  readonly role?: string
  readonly items?: ReadonlyArray<SceneNode>
  readonly datum?: Record<string, unknown>
  readonly text?: string
  readonly x?: number
  readonly y?: number
  readonly y2?: number
  readonly size?: number
}

/** Every mark item of a scenegraph, depth first. */
const itemsOf = (node: SceneNode, mark?: SceneNode): Array<DrawnItem> => {
  const out: Array<DrawnItem> = []
  if (mark !== undefined && node.marktype === undefined) {
    out.push({ marktype: mark.marktype!, role: mark.role ?? "", datum: node.datum, text: node.text, x: node.x, y: node.y, y2: node.y2, size: node.size })
  }
  for (const child of node.items ?? []) out.push(...itemsOf(child, node.marktype !== undefined ? node : mark))
  return out
}

/** Draws a view of an answer: its SVG, its mark items and its title. */
export const drawView = async (view: PluginView, request: unknown, answer: unknown, minCellSize?: number): Promise<{ readonly svg: string; readonly items: ReadonlyArray<DrawnItem> }> => {
  const compiled = compile(chartSpec(view, request, answer, minCellSize) as unknown as TopLevelSpec, { logger: vega.logger(vega.Error) }).spec
  const runtime = new vega.View(vega.parse(compiled), { renderer: "none" })
  try {
    await runtime.runAsync()
    const svg = await runtime.toSVG()
    return { svg, items: itemsOf((runtime.scenegraph() as unknown as { readonly root: SceneNode }).root) }
  } finally {
    runtime.finalize()
  }
}
