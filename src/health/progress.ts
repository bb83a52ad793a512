/**
 * Progress of long CLI jobs on stderr (stdout stays free for the command's result), phase by
 * phase: each phase's share done and an estimate of the time it has left — the time the phase has
 * taken so far scaled by the share still to do, a linear extrapolation that is sound when the work
 * per share is even (bytes read, rows written). On a terminal one line redrawn in place; otherwise
 * (a pipe, a CI log) a line when a phase starts and one per tenth of it, so logs stay readable.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"

const WIDTH = 30

/** Reports a phase's share done (0–1); a new phase name starts that phase. */
export type PhaseProgress = (phase: string, done: number) => Effect.Effect<void>

/** `12.3 s`, `4 min 05 s`. */
const durationOf = (seconds: number): string => {
  if (seconds < 60) return `${seconds.toFixed(1)} s`
  const s = Math.round(seconds)
  return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, "0")} s`
}

/** What is left of a phase after `elapsed` seconds at `share` done, or undefined before the estimate means anything. */
const leftOf = (elapsed: number, share: number): number | undefined => (share < 0.02 || share >= 1 ? undefined : elapsed * (1 - share) / share)

/** Where progress is shown: a terminal is redrawn in place, anything else gets lines. */
export interface ProgressStream {
  readonly isTTY?: boolean | undefined
  readonly write: (text: string) => unknown
}

/** Where a command's progress goes: stderr, unless the command line runs for a program that reads it (`runCli`). */
export const ProgressOut = Context.Reference<ProgressStream>("hcc/health/ProgressOut", { defaultValue: () => process.stderr })

/** A progress display under `label` on `stream` (see the module comment). */
export const progressBar = (label: string, stream: ProgressStream): PhaseProgress => {
  let phase: string | undefined
  let started = performance.now()
  let lastTenth = -1
  let drawn = false
  return (name, done) =>
    Effect.sync(() => {
      const now = performance.now()
      if (name !== phase) {
        if (drawn && stream.isTTY) stream.write("\n")
        phase = name
        started = now
        lastTenth = -1
        drawn = false
      }
      const share = Math.min(1, Math.max(0, done))
      const elapsed = (now - started) / 1000
      const left = leftOf(elapsed, share)
      const time = `${durationOf(elapsed)}${left === undefined ? "" : `, about ${durationOf(left)} left`}`
      const percent = String(Math.floor(share * 100)).padStart(3)
      if (stream.isTTY) {
        const filled = Math.round(share * WIDTH)
        stream.write(`\r\x1b[K${label}: ${name} [${"#".repeat(filled)}${"-".repeat(WIDTH - filled)}] ${percent}% ${time}`)
        drawn = true
        if (share === 1) {
          stream.write("\n")
          drawn = false
        }
      } else {
        const tenth = Math.floor(share * 10)
        if (tenth > lastTenth) {
          lastTenth = tenth
          stream.write(`${label}: ${name} ${tenth * 10}% (${time})\n`)
        }
      }
    })
}

/** One phase of a PhaseProgress, as a plain share callback (for writers that know no phases). */
export const inPhase = (progress: PhaseProgress, phase: string) => (done: number): Effect.Effect<void> => progress(phase, done)

/**
 * The seconds each phase of a job took, for its summary: `enter` starts a phase (ending the one
 * before), `end` ends the last; times are wall-clock seconds to one decimal.
 */
export class PhaseTimes {
  private current: { readonly name: string; readonly started: number } | undefined
  private readonly seconds = new Map<string, number>()

  /** Starts `name` (time spent in a phase entered twice adds up). */
  enter(name: string): void {
    const now = performance.now()
    this.close(now)
    this.current = { name, started: now }
  }

  /** Ends the current phase. */
  end(): void {
    this.close(performance.now())
    this.current = undefined
  }

  private close(now: number): void {
    if (this.current === undefined) return
    this.seconds.set(this.current.name, (this.seconds.get(this.current.name) ?? 0) + (now - this.current.started) / 1000)
  }

  /** A PhaseProgress that times the phases it is told of, and passes every report on to `progress`. */
  tracking(progress: PhaseProgress | undefined): PhaseProgress {
    return (name, done) =>
      Effect.suspend(() => {
        if (this.current?.name !== name) this.enter(name)
        return progress?.(name, done) ?? Effect.void
      })
  }

  /** Phase → seconds, in the order the phases started. */
  toRecord(): Record<string, number> {
    return Object.fromEntries([...this.seconds].map(([name, s]) => [name, Math.round(s * 10) / 10]))
  }
}
