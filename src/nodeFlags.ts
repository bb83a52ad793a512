/**
 * The Node (V8) flags a serving process should start with. They are V8 options, so they cannot be
 * set from inside a running process nor through NODE_OPTIONS: `npm start` passes them
 * (package.json), the supervisor passes them to every `--workers` process, the benches and the test
 * harness start the server with them, and a server started without them says so in its first log
 * lines (docs/deploy.md has the Docker line).
 *
 * `--single-threaded-gc`: each isolate collects its own garbage on its own thread. By default V8
 * marks and sweeps on a pool of helper threads shared by every isolate of the process and running
 * at the normal priority, so a compute thread's collections are done at the HTTP thread's priority
 * (despite the compute thread's lower priority, src/compute/worker.ts), competing with it for the
 * cores —
 * and under cold load each compute thread starts about five full collections a second (V8's soft
 * trigger: the old generation still well under its limit, a few MB allocated since the last one).
 * With compute threads it gives more requests per second under cold load and a shorter event-loop
 * lag on the HTTP thread (docs/deploy.md has the figures). Its cost: garbage made in bulk is
 * swept later, so a first start from SQL holds more resident memory until it is.
 */
export const SERVER_NODE_FLAGS: ReadonlyArray<string> = ["--single-threaded-gc"]

/** The server flags not among `execArgv` (this process's by default). */
export const missingServerFlags = (execArgv: ReadonlyArray<string> = process.execArgv): ReadonlyArray<string> =>
  SERVER_NODE_FLAGS.filter((flag) => !execArgv.includes(flag))
