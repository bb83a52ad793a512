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

/** The JSON-lines logger writing each line (without its newline) to `write`. */
const jsonLoggerTo = (write: (line: string) => void) => Logger.make<unknown, void>(({ cause, date, fiber, logLevel, message }) => {
  const line: Record<string, unknown> = {
    time: date.toISOString(),
    level: logLevel.toLowerCase(),
    msg: Array.isArray(message) ? message.map(String).join(" ") : String(message)
  }
  for (const [key, value] of Object.entries(fiber.getRef(References.CurrentLogAnnotations))) line[key] = value
  if (cause.reasons.length > 0) line.cause = Cause.pretty(cause)
  write(JSON.stringify(line))
})

/** The JSON-lines logger, on the process's log stream (LogSink.ts). */
export const jsonLogger = jsonLoggerTo(writeLine)

/** Whether request lines are written (they are Info lines). */
export const RequestLogEnabled = Context.Reference<boolean>("hcc/RequestLogEnabled", { defaultValue: () => true })

/** Whether probe requests (/healthz, /readyz) get a log line too: only at debug level and below. */
export const ProbeLogEnabled = Context.Reference<boolean>("hcc/ProbeLogEnabled", { defaultValue: () => false })

/**
 * Where lines written outside the logger go (the request lines, Guard.ts, built without a fiber per
 * request): the process's log stream unless `layer` was given a writer.
 */
export const LogLineWriter = Context.Reference<(line: string) => void>("hcc/LogLineWriter", { defaultValue: () => writeLine })

/** Replaces the default logger and sets the minimum level; lines go to the process's log stream unless `write` takes them. */
export const layer = (level: AppSettings["logLevel"], write?: (line: string) => void) =>
  Layer.mergeAll(
    Logger.layer([write === undefined ? jsonLogger : jsonLoggerTo(write)]),
    Layer.succeed(LogLineWriter, write ?? writeLine),
    Layer.succeed(References.MinimumLogLevel, level === "None" ? "None" : level),
    Layer.succeed(RequestLogEnabled, !["Warn", "Error", "Fatal", "None"].includes(level)),
    Layer.succeed(ProbeLogEnabled, level === "Debug" || level === "Trace")
  )
