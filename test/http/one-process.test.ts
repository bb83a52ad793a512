/**
 * Two servers in one process (the test suite's server thread, serverThread.ts) are two servers:
 * each request line is in the log of the server that answered it, and one server's shutdown does
 * not make the other close its connections.
 */
import { describe, expect, it } from "vitest"
import { startServer, waitForLog } from "../support/server.ts"

describe("two servers in one process", () => {
  it("each logs its own requests, and one's shutdown leaves the other's connections open", async () => {
    const [first, second] = await Promise.all([startServer(), startServer()])
    try {
      // Both on the thread: the same process answered.
      expect(first.child).toBeUndefined()
      expect(second.child).toBeUndefined()
      const firstPid = first.logLines().find((l) => l.msg === "listening")!.pid
      expect(second.logLines().find((l) => l.msg === "listening")!.pid).toBe(firstPid)

      await (await fetch(`${first.url}/v1/catalog`)).arrayBuffer()
      await waitForLog(first, (l) => l.msg === "request" && l.path === "/v1/catalog")
      expect(second.logLines().filter((l) => l.msg === "request")).toEqual([])

      expect(await first.stop()).toBe(0)
      expect(first.logLines().at(-1)).toMatchObject({ msg: "stopped" })
      const res = await fetch(`${second.url}/v1/catalog`)
      await res.arrayBuffer()
      expect(res.status).toBe(401)
      expect(res.headers.get("connection")).not.toBe("close")
      await waitForLog(second, (l) => l.msg === "request" && l.path === "/v1/catalog")
      expect(first.logLines().filter((l) => l.msg === "request")).toHaveLength(1)
    } finally {
      await Promise.all([first.stop(), second.stop()])
    }
  })
})
