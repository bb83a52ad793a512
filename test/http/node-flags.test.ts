/**
 * The server's node flags (src/nodeFlags.ts) reach every serving process: `npm start` passes them
 * (hardening.test.ts checks the process it starts), `--workers` passes them to every worker even
 * when the primary was started without them, and a process started without them says so once.
 */
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { SERVER_NODE_FLAGS } from "../../src/nodeFlags.ts"
import { commandLine, ROOT, startServer } from "../support/server.ts"

const warnings = (lines: ReadonlyArray<Record<string, unknown>>) => lines.filter((l) => l.msg === "started without the server's node flags")

describe("the server's node flags", () => {
  it("a server started with them runs with them and warns of nothing", async () => {
    const server = await startServer()
    try {
      const listening = server.logLines().find((l) => l.msg === "listening")!
      expect(commandLine(Number(listening.pid))).toEqual(expect.arrayContaining([...SERVER_NODE_FLAGS]))
      expect(warnings(server.logLines())).toEqual([])
    } finally {
      await server.stop()
    }
  })

  it("a server started without them says which are missing and how to start it", async () => {
    const server = await startServer({ nodeArgs: [] })
    try {
      const [warning, ...more] = warnings(server.logLines())
      expect(more).toEqual([])
      expect(warning).toMatchObject({ level: "warn", missing: SERVER_NODE_FLAGS.join(" "), start_with: `node ${SERVER_NODE_FLAGS.join(" ")} ${join(ROOT, "src/main.ts")}`, see: "docs/deploy.md" })
    } finally {
      await server.stop()
    }
  })

  it("--workers gives them to every worker though its primary was started without them; only the primary warns", async () => {
    const server = await startServer({ nodeArgs: [], serveArgs: ["--workers", "2"] })
    try {
      for (let i = 0; i < 200 && server.logLines().filter((l) => l.msg === "listening").length < 2; i++) await new Promise((r) => setTimeout(r, 50))
      const pids = [...new Set(server.logLines().filter((l) => l.msg === "listening").map((l) => Number(l.pid)))]
      expect(pids).toHaveLength(2)
      for (const pid of pids) expect(commandLine(pid)).toEqual(expect.arrayContaining([...SERVER_NODE_FLAGS]))
      expect(warnings(server.logLines())).toHaveLength(1)
      expect(commandLine(server.child!.pid!)).not.toContain(SERVER_NODE_FLAGS[0])
    } finally {
      await server.stop()
    }
  })
})
