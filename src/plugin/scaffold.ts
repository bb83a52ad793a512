/**
 * `hcc plugin new <name>`: a plugin package outside the service's checkout — package.json with the
 * peer ranges, tsconfig, a plugin with its schemas, handler and an example, and a test that runs
 * the conformance checks of `./testing` (docs/plugins.md).
 */
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { PLUGIN_API_VERSION } from "./spec.ts"

/** A plugin name: kebab-case, as its path `/v1/<name>` and the catalog use it. */
export const PLUGIN_NAME = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/

/** The semver range of effect the package is built and tested with. */
export const EFFECT_RANGE = "~4.1.0"

/** The files of a new plugin package, path → content. */
export const scaffoldFiles = (name: string, serviceVersion: string): Record<string, string> => {
  const [major, minor] = serviceVersion.split(".")
  const serviceRange = major === "0" ? `~${major}.${minor}.0` : `^${major}.0.0`
  return {
    "package.json": JSON.stringify({
      name: `hcc-plugin-${name}`,
      version: "0.1.0",
      description: `HCC plugin: POST /v1/${name}`,
      type: "module",
      exports: { ".": { types: "./dist/index.d.ts", default: "./dist/index.js" } },
      files: ["dist"],
      scripts: {
        build: "tsc -p tsconfig.build.json",
        typecheck: "tsc --noEmit",
        test: "node --test \"test/**/*.test.ts\"",
        prepack: "npm run build"
      },
      peerDependencies: { "hcc-medical-intelligence": serviceRange, effect: EFFECT_RANGE },
      devDependencies: { "hcc-medical-intelligence": serviceRange, effect: EFFECT_RANGE, typescript: "^5.9.0", "@types/node": "^24.0.0" },
      engines: { node: ">=22.19" }
    }, null, 2) + "\n",
    "tsconfig.json": JSON.stringify({
      compilerOptions: {
        target: "ES2024",
        module: "NodeNext",
        moduleResolution: "NodeNext",
        types: ["node"],
        strict: true,
        exactOptionalPropertyTypes: true,
        noUncheckedIndexedAccess: true,
        noEmit: true,
        allowImportingTsExtensions: true,
        erasableSyntaxOnly: true,
        verbatimModuleSyntax: true,
        skipLibCheck: true
      },
      include: ["src", "test"]
    }, null, 2) + "\n",
    "tsconfig.build.json": JSON.stringify({
      extends: "./tsconfig.json",
      compilerOptions: { noEmit: false, declaration: true, rewriteRelativeImportExtensions: true, rootDir: "src", outDir: "dist" },
      include: ["src"]
    }, null, 2) + "\n",
    "src/index.ts": `/**
 * The ${name} plugin: POST /v1/${name}. Replace the schemas and the handler with your domain's;
 * keep at least one example (the conformance test calls each one).
 */
import { Effect, Schema } from "effect"
import { definePlugin, Disclosure, PatientData, roundTo } from "hcc-medical-intelligence/plugin"

export const Request = Schema.Struct({
  max_age: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 120 })).annotate({ description: "Count patients this age or younger at the dataset's as_of" })
})

// Counts of people and the statistics resting on them may be withheld (null) by the small-cell rule.
export const Response = Schema.Struct({
  patients: Schema.NullOr(Schema.Int).annotate({ description: "Patients in the dataset aged max_age or younger; null when fewer than the minimum cell size" }),
  share: Schema.NullOr(Schema.Finite).annotate({ description: "Their share of all patients (0–1); null when it rests on fewer than the minimum cell size" })
})

export default definePlugin({
  name: "${name}",
  version: "0.1.0",
  engine: "^${PLUGIN_API_VERSION}",
  path: "/v1/${name}",
  summary: "How many patients are a given age or younger",
  request: Request,
  response: Response,
  hcc_cost: 0.5,
  // The platform withholds a count of 1 to k - 1 and a statistic resting on one (docs/plugins.md, "Small cells").
  disclosure: { counts: ["/patients"], statistics: ["/share"] },
  examples: [
    { name: "sample", summary: "Patients aged 40 or younger", request: { max_age: 40 } }
  ],
  handler: (request) =>
    Effect.gen(function*() {
      const data = yield* PatientData
      const everyone = (yield* data.about).patients
      const cohort = yield* data.cohort({ ageRange: [0, request.max_age] })
      // The share rests on these patients and on the others.
      ;(yield* Disclosure).rests("/share", cohort.size, everyone - cohort.size)
      return { patients: cohort.size, share: roundTo(cohort.size / Math.max(1, everyone), 4) }
    })
})
`,
    "test/plugin.test.ts": `/** The conformance checks every plugin passes, against the real service on a small generated dataset. */
import { test } from "node:test"
import { checkPlugin } from "hcc-medical-intelligence/testing"

test("${name} conforms", { timeout: 180_000 }, async () => {
  await checkPlugin({ plugin: new URL("../src/index.ts", import.meta.url), patients: 1000 })
})
`,
    "README.md": `# hcc-plugin-${name}

An HCC plugin answering \`POST /v1/${name}\`.

\`\`\`sh
npm install
npm test                      # starts the service with this plugin and runs the conformance checks
npm pack                      # builds dist/ and packs the plugin
\`\`\`

Load it into a service: install the package beside \`hcc-medical-intelligence\` and start the service
with \`HCC_PLUGINS=hcc-plugin-${name}\` (or \`HCC_PLUGINS=./path/to/src/index.ts\` while developing).
`
  }
}

/** Why a scaffold cannot be written, or undefined. */
export const scaffoldProblem = (name: string, dir: string): string | undefined => {
  if (!PLUGIN_NAME.test(name)) return `plugin name "${name}" must be kebab-case (a-z, 0-9, single dashes), e.g. "wait-times"`
  if (existsSync(dir) && readdirSync(dir).length > 0) return `${dir} exists and is not empty; choose another --dir`
  return undefined
}

/** Writes the scaffold into `dir`; returns the files written (relative paths). */
export const writeScaffold = (name: string, dir: string, serviceVersion: string): ReadonlyArray<string> => {
  const files = scaffoldFiles(name, serviceVersion)
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(dir, path, ".."), { recursive: true })
    writeFileSync(join(dir, path), content)
  }
  return Object.keys(files)
}
