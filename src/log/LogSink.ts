/**
 * Where log lines go: stdout (the server), or stderr (CLI commands, whose stdout is their result),
 * one JSON object per line. Lines written in the same event-loop turn
 * are joined into one write (a busy server logs thousands of lines a second; one syscall per line
 * was a measurable share of a request), and whatever is pending is written synchronously when the
 * process exits, so no line is lost and order is kept.
 */
import { writeSync } from "node:fs"

let pending = ""
let scheduled = false
/** File descriptor the lines go to: 1 (stdout) or 2 (stderr). */
let fd: 1 | 2 = 1

/** Sends log lines to stderr from now on (CLI commands: stdout carries the command's result). */
export const logToStderr = (): void => {
  fd = 2
}

const flush = (): void => {
  scheduled = false
  if (pending === "") return
  const chunk = pending
  pending = ""
  ;(fd === 1 ? process.stdout : process.stderr).write(chunk)
}

/** Flushes synchronously (used at exit). */
export const flushSync = (): void => {
  if (pending === "") return
  const chunk = pending
  pending = ""
  try {
    writeSync(fd, chunk)
  } catch {
    // stdout closed: nothing left to write to
  }
}

process.on("exit", flushSync)

/** Appends one line (without its newline). */
export const writeLine = (line: string): void => {
  pending += line + "\n"
  if (pending.length > 65_536) flush()
  else if (!scheduled) {
    scheduled = true
    setImmediate(flush)
  }
}
