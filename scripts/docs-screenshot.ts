/**
 * `npm run docs:screenshot`: pictures of the docs and of every view, taken with the system's
 * headless Chromium (scripts/chromium.ts) against a real server on the default-sized dataset:
 * - build/docs-reference.png and build/docs-errors.png: the API reference and the errors guide;
 * - docs/images/view-<domain>.png: the explorer's chart of each built-in endpoint's first catalog
 *   example — the question the explorer fills its form with when a newcomer picks the endpoint
 *   (the README shows two of them).
 * Ctrl-C or SIGTERM stops the browser and the server.
 */
import { mkdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { launchChromium } from "./chromium.ts"
import builtins from "../plugins/index.ts"
import { ROOT, startService } from "./serve.ts"

const service = await startService({ HCC_POPULATION: process.env["HCC_POPULATION"] ?? "50000" })
const browser = await launchChromium()
const stop = async (code: number) => {
  await browser.close().catch(() => undefined)
  service.stop()
  process.exit(code)
}
process.once("SIGINT", () => void stop(130))
process.once("SIGTERM", () => void stop(143))
try {
  process.stdout.write("waiting for the dataset")
  while (!(await fetch(`${service.base}/readyz`).then((r) => r.ok, () => false))) {
    process.stdout.write(".")
    await new Promise((r) => setTimeout(r, 1000))
  }
  process.stdout.write(" ready\n")
  mkdirSync(join(ROOT, "build"), { recursive: true })
  mkdirSync(join(ROOT, "docs/images"), { recursive: true })
  const page = await browser.newPage({ viewport: { width: 1280, height: 1400 } })
  for (const [path, file] of [["/docs", "docs-reference.png"], ["/docs/errors", "docs-errors.png"]] as const) {
    await page.goto(`${service.base}${path}`, { waitUntil: "networkidle" })
    await page.screenshot({ path: join(ROOT, "build", file) })
    console.log(`${path} → build/${file}`)
  }
  await page.goto(`${service.base}/docs/explore`)
  await page.waitForSelector("body[data-ready=true]")
  await page.fill("#token", readFileSync(join(service.dataDir, "demo.token"), "utf8").trim())
  await page.click("text=Use this token")
  await page.waitForSelector("#ask:not([hidden])")
  await page.click("text=The request as JSON")
  for (const [path, body] of builtins.flatMap((p) => (p.examples?.[0] === undefined ? [] : [[p.path, p.examples[0].request] as const]))) {
    await page.selectOption("#domain", path)
    await page.fill("#request-json", JSON.stringify(body))
    await page.click("#use-json")
    await page.click("#ask-button")
    await page.waitForSelector("body[data-state=answered], body[data-state=problem]")
    const file = `view-${path.slice("/v1/".length)}.png`
    if ((await page.getAttribute("body", "data-state")) !== "answered") {
      console.error(`${path}: no answer (${await page.textContent("#ask-problem")})`)
      continue
    }
    await page.locator("#chart svg").screenshot({ path: join(ROOT, "docs/images", file) })
    console.log(`${path} → docs/images/${file}`)
  }
  await stop(0)
} catch (e) {
  console.error(e instanceof Error ? e.message : e)
  await stop(1)
}
