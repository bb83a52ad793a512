/**
 * `npm run test:quick`, the inner loop: the test files that run in their own process only (no
 * server, no other process, no PostgreSQL, no generated fixture), and one real server over HTTP
 * (encoding.test.ts: the door, its headers and bytes). The whole suite stays `npm test`, which CI
 * runs; this is a first check between edits, not a substitute.
 */
import { defineConfig } from "vitest/config"
import base from "./vitest.config.ts"

/** The files of the quick run (test/docs/test-quick.test.ts checks each exists). */
export const QUICK_FILES: ReadonlyArray<string> = [
  "test/auth/PrincipalCache.test.ts",
  "test/auth/Token.test.ts",
  "test/bench/http-bench-format.test.ts",
  "test/bench/peer-format.test.ts",
  "test/core/core.test.ts",
  "test/db/durable.test.ts",
  "test/docs/catalogues.test.ts",
  "test/docs/data-doc.test.ts",
  "test/docs/house.test.ts",
  "test/docs/test-quick.test.ts",
  "test/health/calendar.test.ts",
  "test/http/docs-assets.test.ts",
  "test/http/door.test.ts",
  "test/http/random-ids.test.ts",
  "test/import/bulk-files.test.ts",
  "test/import/condition-map.test.ts",
  "test/import/csv-field.test.ts",
  "test/import/drug-eras-reference.test.ts",
  "test/import/unique-names.test.ts",
  "test/kernels/differential.test.ts",
  "test/kernels/glm.test.ts",
  "test/kernels/kernels.test.ts",
  "test/kernels/panel-periods.test.ts",
  "test/kernels/panel.test.ts",
  "test/kernels/rules.test.ts",
  "test/kernels/static-data.test.ts",
  "test/kernels/tenths.test.ts",
  "test/kernels/thresholds.test.ts",
  "test/metering/BurstBuckets.test.ts",
  "test/metering/coalescer.test.ts",
  "test/network/network-file.test.ts",
  "test/package/up-to-date.test.ts",
  "test/plugin/disclosure.test.ts",
  "test/plugin/helpers.test.ts",
  "test/plugin/surface.test.ts",
  "test/plugins/import-boundary.test.ts",
  "test/views/spec-schema.test.ts",
  "test/views/view-data.test.ts",
  "test/views/view-text.test.ts",
  "test/views/views.test.ts",
  // The one server.
  "test/http/encoding.test.ts"
]

// The full run's settings, with its file list and set-up replaced (vitest's mergeConfig would add to both lists).
export default defineConfig({
  ...base,
  test: { ...base.test, include: [...QUICK_FILES], globalSetup: ["test/support/globalSetup.quick.ts"] }
})
