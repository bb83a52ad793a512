/**
 * The system's Chromium (Debian's `chromium`; the project never downloads a browser) started
 * headless through playwright-core, for the explorer's browser tests and `npm run docs:screenshot`.
 * The flags keep it from reaching out to the network at start (background networking, component
 * updates, sync), which a closed network answers with refused connections.
 */
import { spawnSync } from "node:child_process"
import { type Browser, chromium } from "playwright-core"

const BROWSERS = ["chromium", "chromium-browser", "google-chrome"]

/** The path of a Chromium on the PATH, or an error that says how to get one. */
export const chromiumPath = (): string => {
  for (const b of BROWSERS) {
    const found = spawnSync("which", [b], { encoding: "utf8" })
    if (found.status === 0) return found.stdout.trim()
  }
  throw new Error(`No Chromium on the PATH (${BROWSERS.join(", ")}): on Debian, apt-get install chromium (.ci/run installs it)`)
}

export const launchChromium = (): Promise<Browser> =>
  chromium.launch({
    executablePath: chromiumPath(),
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"]
  })
