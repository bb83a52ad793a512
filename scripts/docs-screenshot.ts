/**
 * `npm run docs:screenshot`: screenshots of /docs (the API reference, whose description links the
 * guides) and of the errors guide, taken with a headless Chromium against a real server, written to
 * build/docs-reference.png and build/docs-errors.png. Needs a Chromium on the PATH (`chromium`,
 * `chromium-browser` or `google-chrome`; on Debian `apt-get install chromium`): the project does not
 * download browsers.
 */
import { spawn, spawnSync } from "node:child_process"
import { mkdirSync, mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"

const ROOT = resolve(import.meta.dirname, "..")
const browser = ["chromium", "chromium-browser", "google-chrome"].find((b) => spawnSync("which", [b]).status === 0)
if (browser === undefined) {
  console.error("No Chromium on the PATH (chromium, chromium-browser or google-chrome); on Debian: apt-get install chromium")
  process.exit(1)
}
const child = spawn(process.execPath, [join(ROOT, "src/main.ts")], {
  cwd: ROOT,
  env: { ...process.env, PORT: "0", HOST: "127.0.0.1", HCC_DATA_DIR: mkdtempSync(join(tmpdir(), "hcc-shot-")), HCC_POPULATION: "1000", HCC_LOG_LEVEL: "info" },
  stdio: ["ignore", "pipe", "inherit"]
})
let out = ""
child.stdout!.setEncoding("utf8").on("data", (d: string) => (out += d))
const port = await new Promise<number>((ok) => {
  const timer = setInterval(() => {
    const line = out.split("\n").find((l) => l.includes('"msg":"listening"'))
    if (line !== undefined) {
      clearInterval(timer)
      ok(Number(JSON.parse(line).port))
    }
  }, 50)
})
mkdirSync(join(ROOT, "build"), { recursive: true })
for (const [path, file] of [["/docs", "docs-reference.png"], ["/docs/errors", "docs-errors.png"]] as const) {
  const shot = spawnSync(browser, [
    "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=1280,1400",
    "--virtual-time-budget=5000", `--screenshot=${join(ROOT, "build", file)}`, `http://127.0.0.1:${port}${path}`
  ], { encoding: "utf8" })
  if (shot.status !== 0) console.error(shot.stderr)
  console.log(`${path} → build/${file}`)
}
child.kill("SIGTERM")
