/**
 * Whether a plugin's view specification compiles (vega-lite), the last of the view's checks
 * (viewCheck.ts). Vega-Lite brings all of Vega with it, so this module is loaded only for the
 * plugins that need it: those of HCC_PLUGINS. The service's own views are compiled and drawn by
 * its test suite, and a server with only those starts without Vega.
 */
import { Error as ERROR_LEVEL, logger } from "vega"
import { compile } from "vega-lite"
import type { PluginView } from "./view.ts"

/** Why the view's specification does not compile (its first line), or undefined. */
export const compileProblem = (view: PluginView): string | undefined => {
  try {
    // Errors only: Vega-Lite's warnings would reach the service's stderr outside its JSON log.
    compile({ ...view.spec, datasets: Object.fromEntries(Object.keys(view.data).map((n) => [n, []])) } as Parameters<typeof compile>[0], { logger: logger(ERROR_LEVEL) })
  } catch (e) {
    return `view.spec does not compile: ${e instanceof Error ? e.message.split("\n")[0] : String(e)}`
  }
  return undefined
}
