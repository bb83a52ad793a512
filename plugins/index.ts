/** The built-in plugins, in catalog order. A test checks this list against the folders beside it. */
import type { Plugin } from "../src/plugin/Plugin.ts"

const builtins: ReadonlyArray<Plugin> = []

export default builtins
