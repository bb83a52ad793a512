import { defineConfig } from "vitest/config"

/** `npm run bench:vitest`: the core's vitest bench files, without the test suite's global setup. */
export default defineConfig({
  test: {
    benchmark: { include: ["bench/vitest/**/*.bench.ts"] }
  }
})
