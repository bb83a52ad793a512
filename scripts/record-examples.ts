/**
 * `npm run docs:examples`: answers every built-in plugin's examples on the default dataset (50,000
 * patients, the default seed) with a real server, and writes them to `plugins/<name>/example-answers.json`,
 * which each plugin's index.ts attaches to its examples (the 200 examples of the OpenAPI document).
 * test/http/openapi-examples.test.ts re-runs the examples and compares: rerun this after a change
 * that moves a number.
 */
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import builtins from "../plugins/index.ts"
import { ROOT, startService } from "./serve.ts"

const { base, dataDir, stop } = await startService({ HCC_POPULATION: "50000" })
for (;;) {
  const ready = await fetch(`${base}/readyz`).catch(() => undefined)
  if (ready?.status === 200) break
  await new Promise((r) => setTimeout(r, 500))
}
const token = readFileSync(join(dataDir, "demo.token"), "utf8").trim()
for (const plugin of builtins) {
  const answers: Record<string, unknown> = {}
  for (const example of plugin.examples ?? []) {
    const res = await fetch(base + plugin.path, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify(example.request)
    })
    if (res.status !== 200) throw new Error(`${plugin.path} ${example.name}: ${res.status} ${await res.text()}`)
    answers[example.name] = await res.json()
  }
  writeFileSync(join(ROOT, "plugins", plugin.name, "example-answers.json"), JSON.stringify(answers, null, 2) + "\n")
  console.log(`${plugin.name}: ${Object.keys(answers).length} example answer(s)`)
}
stop()
