/**
 * `npm run docs:screenshot`: screenshots of /docs (the API reference, whose description links the
 * guides) and of the errors guide, taken with a headless Chromium against a real server, written to
 * build/docs-reference.png and build/docs-errors.png. Needs a Chromium on the PATH (`chromium`,
 * `chromium-browser` or `google-chrome`; on Debian `apt-get install chromium`): the project does not
 * download browsers.
 */
import { spawnSync } from "node:child_process"
import { mkdirSync } from "node:fs"
import { join } from "node:path"
import { ROOT, startService } from "./serve.ts"

const browser = ["chromium", "chromium-browser", "google-chrome"].find((b) => spawnSync("which", [b]).status === 0)
if (browser === undefined) {
  console.error("No Chromium on the PATH (chromium, chromium-browser or google-chrome); on Debian: apt-get install chromium")
  process.exit(1)
}
const { base, stop } = await startService({ HCC_POPULATION: "1000" })
mkdirSync(join(ROOT, "build"), { recursive: true })
for (const [path, file] of [["/docs", "docs-reference.png"], ["/docs/errors", "docs-errors.png"]] as const) {
  const shot = spawnSync(browser, [
    "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=1280,1400",
    "--virtual-time-budget=5000", `--screenshot=${join(ROOT, "build", file)}`, `${base}${path}`
  ], { encoding: "utf8" })
  if (shot.status !== 0) console.error(shot.stderr)
  console.log(`${path} → build/${file}`)
}
stop()
