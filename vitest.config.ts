import { defineConfig } from "vitest/config"
import { SERVER_NODE_FLAGS } from "./src/nodeFlags.ts"
import SlowFirstSequencer from "./test/support/sequencer.ts"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "plugins/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Three files at a time on a 2-core machine. A file's servers and `hcc` commands run on threads
    // of its own worker (serverThread.ts, cliThread.ts), yet files also wait (a deadline, a child
    // process, Chromium): with two at a time a core idles about as long as a third makes them
    // preempt one another; four make the run longer (docs/benchmarks.md, "Start-up").
    maxWorkers: 3,
    // A worker runs file after file without loading its modules anew: a worker per file would start
    // a process and load the modules the files share (the command thread's among them) each time.
    // So a helper keeps per-file state by file (engines.ts's databases), and a file leaves no
    // process-wide state behind (an environment variable it sets is set back).
    isolate: false,
    // Test servers run on a thread of the worker (test/support/serverThread.ts): the worker starts
    // with the server's node flags, as `npm start` does, so those servers run as a served process does.
    execArgv: [...SERVER_NODE_FLAGS],
    globalSetup: ["test/support/globalSetup.ts"],
    // The slow files first when vitest has no times from an earlier run (a fresh clone, as CI's).
    sequence: { sequencer: SlowFirstSequencer },
    reporters: ["default"]
  }
})
