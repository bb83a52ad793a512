/** What every `hcc` command shares: `--json`, usage errors, tables and printing a result. */
import * as Console from "effect/Console"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Flag from "effect/cli/Flag"
import * as GlobalFlag from "effect/cli/GlobalFlag"

/** `--json` on every command: results as JSON on stdout, errors as problem JSON on stderr. */
export const Json = GlobalFlag.Setting("json")({
  flag: Flag.Boolean("json").pipe(
    Flag.withDescription("Print the result as JSON on stdout, and any error as problem JSON on stderr"),
    Flag.withDefault(false)
  )
})

/** A command called wrongly (a bad flag value): exit 2, like a parse error. */
export class UsageError extends Error {}

/** Left-aligned columns, header first. */
export const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)))
  return [header, ...rows].map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd()).join("\n")
}

/** Prints the result: JSON when `--json`, else the human text. */
export const emit = (value: unknown, human: () => string) =>
  Effect.flatMap(Json, (json) => Console.log(json ? JSON.stringify(value) : human()))


/** `emit` with `--json` read now: for a result printed where the flag is not at hand (a dataset switch's uninterruptible step). */
export const emitter = Effect.map(Json, (json) => (value: unknown, human: () => string) => Console.log(json ? JSON.stringify(value) : human()))

/**
 * Whether the command has done what a stop signal can no longer undo (a new dataset switched to):
 * the CLI then reports success whatever signal arrives after, since the interruption that follows
 * the uninterruptible switch would otherwise end the command as stopped.
 */
export const Committed = Context.Reference<{ done: boolean }>("hcc/cli/Committed", { defaultValue: () => ({ done: false }) })
