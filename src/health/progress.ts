/**
 * A progress bar on stderr for long CLI jobs: redrawn in place on a terminal, one line per tenth
 * otherwise (so logs and CI output stay readable). stdout stays free for the command's result.
 */
import { Effect } from "effect"

const WIDTH = 30

/** Reports a share done (0–1) under `label`; call with 1 last. */
export const progressBar = (label: string, stream: NodeJS.WriteStream = process.stderr) => {
  let lastTenth = -1
  const started = performance.now()
  return (done: number): Effect.Effect<void> =>
    Effect.sync(() => {
      const share = Math.min(1, Math.max(0, done))
      const seconds = ((performance.now() - started) / 1000).toFixed(1)
      if (stream.isTTY) {
        const filled = Math.round(share * WIDTH)
        stream.write(`\r${label} [${"#".repeat(filled)}${"-".repeat(WIDTH - filled)}] ${String(Math.floor(share * 100)).padStart(3)}% ${seconds}s`)
        if (share === 1) stream.write("\n")
      } else {
        const tenth = Math.floor(share * 10)
        if (tenth > lastTenth) {
          lastTenth = tenth
          stream.write(`${label}: ${tenth * 10}% (${seconds}s)\n`)
        }
      }
    })
}
