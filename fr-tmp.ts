import { writeFileSync } from "node:fs"
import { forestRows } from "./plugins/device-outcomes/forest.ts"
import { contract as device } from "./plugins/device-outcomes/contract.ts"
import { drawView } from "./src/views/render.ts"
import { launchChromium } from "./scripts/chromium.ts"
const rate = (study: string, events: number, n: number) => ({ study, n, events, estimate: events / n, variance: (events / n) * (1 - events / n) / n })
const rates = [rate("S1", 12, 150), rate("S2", 30, 160), rate("S3", 9, 140), rate("S4", 3, 60)]
const scores = [
  { study: "S1", n: 40, events: Number.NaN, estimate: 7.2, variance: 0.04 },
  { study: "S2", n: 55, events: Number.NaN, estimate: 7.9, variance: 0.03 },
  { study: "S3", n: 38, events: Number.NaN, estimate: 7.5, variance: 0.05 }
]
const forest = [...forestRows("complication_rate", rates), ...forestRows("patient_satisfaction", scores)]
forest[1] = { ...forest[1]!, estimate: null, ci_low: null, ci_high: null, weight: null, n: null }
console.log(JSON.stringify(forest.slice(0, 5), null, 0))
const answer = { device_category: "knee_implant", studies_analyzed: 4, outcomes: {}, sample_size: 510, view_data: { forest }, hcc_cost: 3 }
const { svg, items } = await drawView(device.view!, {}, answer)
writeFileSync("/tmp/forest.svg", svg)
const b = await launchChromium(); const p = await b.newPage({ viewport: { width: 900, height: 700 } })
await p.setContent(`<body style="margin:0;background:white">${svg}</body>`); await p.screenshot({ path: "/tmp/forest.png", fullPage: true }); await b.close()
console.log(items.filter((i) => i.marktype === "trail").length)
