/**
 * The public surface of the plugin contract's entries (`./plugin`, `./plugin/contract` and
 * `./plugin/experimental`):
 * every exported name with its kind and the text of its type as TypeScript states it. The snapshot
 * (test/plugin/plugin-surface.json) pins it: test/plugin/surface.test.ts fails when the surface
 * differs from the snapshot, and `npm run plugin:surface` writes a new snapshot only once
 * `PLUGIN_API_VERSION` has moved as semver asks (a removed or changed name of the stable entry, or
 * a required member added to an interface: a new major; an added name or optional member: a new
 * minor; the experimental entry: any new version). Interfaces are listed member by member.
 */
import { createHash } from "node:crypto"
import { readFileSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"
import semver from "semver"
import ts from "typescript"
import { PLUGIN_API_VERSION } from "../src/plugin/spec.ts"

const ROOT = resolve(import.meta.dirname, "..")

/** The entries a plugin imports, by the subpath the package exports them at. */
export const ENTRIES = {
  "./plugin": "src/plugin/Plugin.ts",
  "./plugin/contract": "src/plugin/contract.ts",
  "./plugin/experimental": "src/plugin/experimental.ts"
} as const

/** Where the snapshot is kept. */
export const SNAPSHOT = join(ROOT, "test/plugin/plugin-surface.json")

/** One entry's surface: name → "kind: type" (a long type by its hash, so the snapshot stays readable). */
export type Surface = Record<keyof typeof ENTRIES, Record<string, string>>

export interface Snapshot {
  readonly version: string
  readonly surface: Surface
}

const show = (checker: ts.TypeChecker, type: ts.Type): string => checker.typeToString(type, undefined, ts.TypeFormatFlags.NoTruncation)

/**
 * Whether a type is listed member by member: an interface, a class, or an alias of an object type
 * literal or of Omit, Pick, Partial, Required or Readonly of one (its members move with the type
 * it is made from).
 */
const memberwise = (target: ts.Symbol): boolean => {
  if (target.flags & (ts.SymbolFlags.Interface | ts.SymbolFlags.Class)) return true
  const decl = target.declarations?.[0]
  if (decl === undefined || !ts.isTypeAliasDeclaration(decl)) return false
  return ts.isTypeLiteralNode(decl.type) ||
    (ts.isTypeReferenceNode(decl.type) && ["Omit", "Pick", "Partial", "Required", "Readonly"].includes(decl.type.typeName.getText()))
}

const typeText = (checker: ts.TypeChecker, symbol: ts.Symbol, at: ts.Node): string => {
  const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol
  const kinds: Array<string> = []
  const texts: Array<string> = []
  if (target.flags & ts.SymbolFlags.Value) {
    kinds.push("value")
    texts.push(show(checker, checker.getTypeOfSymbolAtLocation(target, at)))
  }
  if (target.flags & ts.SymbolFlags.Type) {
    kinds.push("type")
    // An interface, class or object alias is listed by its members (`Name.member`, membersOf), so
    // an optional member added reads as an added name; another type alias by its text.
    texts.push(
      memberwise(target)
        ? "interface"
        : checker.typeToString(checker.getDeclaredTypeOfSymbol(target), undefined, ts.TypeFormatFlags.NoTruncation | ts.TypeFormatFlags.InTypeAlias)
    )
  }
  // A well-known symbol's member prints with the checker's id for it (`__@iterator@221`), which
  // moves whenever the program loads files in another order: the name alone is the surface.
  const text = texts.join(" & ").replace(/(__@\w+)@\d+/g, "$1")
  return `${kinds.join("+")}: ${text.length <= 200 ? text : `sha256:${createHash("sha256").update(text).digest("hex").slice(0, 16)}`}`
}

/** The members of an exported interface or class: `Name.member` → "member: type" (`member?:` when optional). */
const membersOf = (checker: ts.TypeChecker, symbol: ts.Symbol, at: ts.Node): Record<string, string> => {
  const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol
  if (!(target.flags & ts.SymbolFlags.Type) || !memberwise(target)) return {}
  const out: Record<string, string> = {}
  for (const p of checker.getPropertiesOfType(checker.getDeclaredTypeOfSymbol(target))) {
    // effect's own keys (`~effect/…`): its type ids, and the keys some of its modules add to every
    // Error when they are in the program. They belong to effect, not to the plugin contract, and
    // some come and go with which of effect's modules the program happens to load.
    if (p.name.startsWith("~effect/")) continue
    const text = show(checker, checker.getTypeOfSymbolAtLocation(p, at)).replace(/(__@\w+)@\d+/g, "$1")
    const optional = p.flags & ts.SymbolFlags.Optional ? "?" : ""
    out[`${symbol.name}.${p.name.replace(/@\d+$/, "")}`] = `member${optional}: ${text.length <= 200 ? text : `sha256:${createHash("sha256").update(text).digest("hex").slice(0, 16)}`}`
  }
  return out
}

/** The current surface of every entry. */
export const pluginSurface = (): Surface => {
  const config = ts.getParsedCommandLineOfConfigFile(join(ROOT, "tsconfig.json"), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} })!
  const files = Object.values(ENTRIES).map((f) => join(ROOT, f))
  const program = ts.createProgram(files, config.options)
  const checker = program.getTypeChecker()
  const out = {} as Surface
  for (const [entry, file] of Object.entries(ENTRIES) as Array<[keyof typeof ENTRIES, string]>) {
    const source = program.getSourceFile(join(ROOT, file))!
    const names: Record<string, string> = {}
    for (const symbol of checker.getExportsOfModule(checker.getSymbolAtLocation(source)!).sort((a, b) => a.name.localeCompare(b.name))) {
      names[symbol.name] = typeText(checker, symbol, source)
      Object.assign(names, membersOf(checker, symbol, source))
    }
    out[entry] = names
  }
  return out
}

/** The version bump a change of surface needs: none, a new minor, or a new major. */
export const bumpNeeded = (before: Surface, after: Surface): "none" | "minor" | "major" => {
  // The version's own value moves with every bump: it is not a change of the surface.
  const stableEntries = ["./plugin", "./plugin/contract"] as const
  const removedOrChanged = stableEntries.some((entry) =>
    Object.entries(before[entry] ?? {}).some(([name, type]) => name !== "PLUGIN_API_VERSION" && after[entry]?.[name] !== type)
  )
  // A required member added to an interface breaks a plugin that implements it.
  const requiredAdded = stableEntries.some((entry) =>
    Object.entries(after[entry] ?? {}).some(([name, type]) => before[entry]?.[name] === undefined && type.startsWith("member:") && before[entry]?.[name.split(".")[0]!] !== undefined)
  )
  if (removedOrChanged || requiredAdded) return "major"
  const added = stableEntries.some((entry) => Object.keys(after[entry] ?? {}).some((name) => before[entry]?.[name] === undefined))
  const experimental = JSON.stringify(before["./plugin/experimental"]) !== JSON.stringify(after["./plugin/experimental"])
  return added || experimental ? "minor" : "none"
}

/** Whether `version` moved from `from` as `bump` asks (a major also covers a minor; a minor a patch). */
export const bumpedEnough = (from: string, version: string, bump: "none" | "minor" | "major"): boolean => {
  if (bump === "none") return true
  if (!semver.gt(version, from)) return false
  return bump === "major" ? semver.major(version) > semver.major(from) : semver.major(version) > semver.major(from) || semver.minor(version) > semver.minor(from)
}

export const readSnapshot = (): Snapshot => JSON.parse(readFileSync(SNAPSHOT, "utf8")) as Snapshot

if (import.meta.main) {
  const current = pluginSurface()
  let previous: Snapshot | undefined
  try {
    previous = readSnapshot()
  } catch {
    previous = undefined
  }
  if (previous !== undefined) {
    const bump = bumpNeeded(previous.surface, current)
    if (!bumpedEnough(previous.version, PLUGIN_API_VERSION, bump)) {
      console.error(`The plugin API surface changed (a ${bump} change) but PLUGIN_API_VERSION is ${PLUGIN_API_VERSION} (snapshot: ${previous.version}): raise it in src/plugin/spec.ts first.`)
      process.exit(1)
    }
  }
  writeFileSync(SNAPSHOT, JSON.stringify({ version: PLUGIN_API_VERSION, surface: current }, null, 2) + "\n")
  console.log(`wrote ${SNAPSHOT} for plugin API ${PLUGIN_API_VERSION}`)
}
