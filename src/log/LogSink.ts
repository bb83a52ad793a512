/**
 * Where log lines go: stdout, one JSON object per line. Lines written in the same event-loop turn
 * are joined into one write (a busy server logs thousands of lines a second; one syscall per line
 * was a measurable share of a request), and whatever is pending is written synchronously when the
 * process exits, so no line is lost and order is kept.
 */
import { writeSync } from "node:fs"

let pending = ""
let scheduled = false

const flush = (): void => {
  scheduled = false
  if (pending === "") return
  const chunk = pending
  pending = ""
  process.stdout.write(chunk)
}

/** Flushes synchronously (used at exit). */
export const flushSync = (): void => {
  if (pending === "") return
  const chunk = pending
  pending = ""
  try {
    writeSync(1, chunk)
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
