import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "plugins/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Most of a test file's time is spent waiting for the servers it starts (child processes), not
    // in its own worker: three files at a time keep a 2-core machine busy without oversubscribing it.
    maxWorkers: 3,
    globalSetup: ["test/support/globalSetup.ts"],
    reporters: ["default"]
  }
})
