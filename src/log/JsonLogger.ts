/**
 * One JSON object per line on stdout: `time`, `level`, `msg`, the fiber's log annotations, and a
 * rendered `cause` for failures. Nothing here reads requests: callers decide what is annotated,
 * and the platform never annotates tokens, bodies or patient data.
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as References from "effect/References"
import type { AppSettings } from "../config/AppConfig.ts"
import { writeLine } from "./LogSink.ts"

/** The JSON-lines logger. */
export const jsonLogger = Logger.make<unknown, void>(({ cause, date, fiber, logLevel, message }) => {
  const line: Record<string, unknown> = {
    time: date.toISOString(),
    level: logLevel.toLowerCase(),
    msg: Array.isArray(message) ? message.map(String).join(" ") : String(message)
  }
  for (const [key, value] of Object.entries(fiber.getRef(References.CurrentLogAnnotations))) line[key] = value
  if (cause.reasons.length > 0) line.cause = Cause.pretty(cause)
  writeLine(JSON.stringify(line))
})

/** Whether request lines are written (they are Info lines). */
export const RequestLogEnabled = Context.Reference<boolean>("hcc/RequestLogEnabled", { defaultValue: () => true })

/** Whether probe requests (/healthz, /readyz) get a log line too: only at debug level and below. */
export const ProbeLogEnabled = Context.Reference<boolean>("hcc/ProbeLogEnabled", { defaultValue: () => false })

/** Replaces the default logger and sets the minimum level. */
export const layer = (level: AppSettings["logLevel"]) =>
  Layer.mergeAll(
    Logger.layer([jsonLogger]),
    Layer.succeed(References.MinimumLogLevel, level === "None" ? "None" : level),
    Layer.succeed(RequestLogEnabled, !["Warn", "Error", "Fatal", "None"].includes(level)),
    Layer.succeed(ProbeLogEnabled, level === "Debug" || level === "Trace")
  )
