/**
 * The Node HTTP server under the Effect app, with its edges bounded (docs/api.md, "Connections and
 * shutdown"):
 * - header, request and keep-alive timeouts from the settings, checked every second;
 * - at most `maxConnections` open connections: a new one past the cap closes the connection idle the
 *   longest (a slow client that has not finished its headers counts as idle), or is itself closed
 *   when every connection is serving a request — so slow sockets cannot lock normal callers out;
 * - Node's own refusals (malformed request line, headers too large, request timeout) answer
 *   problem+json with `hcc_cost: 0` and an `X-Request-Id`, like every other response;
 * - a shutdown that loses nothing: listening stops, every request that arrives is still served (with
 *   `Connection: close`), and a connection is closed only once it has been idle for DRAIN_IDLE_MS.
 */
import { randomUUID } from "node:crypto"
import { type IncomingMessage, Server, type ServerResponse } from "node:http"
import { Server as NetServer, type Socket } from "node:net"
import * as Context from "effect/Context"
import type { AppSettings } from "../config/AppConfig.ts"
import { STATUS_TITLES } from "./errorCatalog.ts"
import { problemText } from "./Problems.ts"

/** During shutdown, how long a connection may sit idle (no request in progress) before it is closed. */
export const DRAIN_IDLE_MS = 1000

interface Connection {
  /** Requests received and not yet answered on this connection. */
  active: number
  /** When it last became idle (connected, or finished a response). */
  idleSince: number
}

/** A problem+json response written straight to a socket, for requests Node refuses before the app sees them. */
const rawProblem = (status: number, code: string, detail: string): string => {
  const requestId = randomUUID()
  const body = problemText(status, code, detail, requestId)
  return `HTTP/1.1 ${status} ${STATUS_TITLES[status] ?? "Error"}\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
    `X-Request-Id: ${requestId}\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n${body}`
}

/** Node's parser and timeout errors → the status and code they are answered with. */
const refusalOf = (error: NodeJS.ErrnoException): readonly [number, string, string] => {
  switch (error.code) {
    case "HPE_HEADER_OVERFLOW":
      return [431, "headers_too_large", "The request headers are too large (the limit is 16 KiB)."]
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return [408, "request_timeout", "The request was not received in time."]
    default:
      return [400, "invalid_request", "The request is not valid HTTP/1.1."]
  }
}

/** The Node server this process serves on (the door, Door.ts, is its request listener). */
export class NodeServer extends Context.Service<NodeServer, Server>()("hcc/NodeServer") {}

/**
 * Node's HTTP server with this service's shutdown: `close` stops listening, lets whatever still
 * arrives be served, and closes each connection once it has been idle for DRAIN_IDLE_MS.
 * (http.Server#close would first close every connection idle at that instant — including one
 * whose next request is on the wire but not yet parsed — so the listening socket is closed
 * directly.)
 */
class DrainingServer extends Server {
  /** Open connections: requests in progress on each, and since when it is idle. */
  readonly open = new Map<Socket, Connection>()
  /** Whether this server is shutting down (its responses then carry `Connection: close`). */
  draining = false

  override close(callback?: (err?: Error) => void): this {
    this.draining = true
    const started = Date.now()
    const sweep = setInterval(() => {
      const now = Date.now()
      for (const [socket, c] of this.open) {
        if (c.active === 0 && now - Math.max(c.idleSince, started) >= DRAIN_IDLE_MS) socket.destroy()
      }
    }, 50)
    NetServer.prototype.close.call(this, (err?: Error) => {
      clearInterval(sweep)
      callback?.(err)
    })
    return this
  }
}

/**
 * Creates the server for the settings (NodeHttpServer listens and closes it; the door answers its
 * requests). Every request is counted for the connection cap and the drain first (this server's
 * own `request` listener, added before the door's).
 */
export const makeNodeServer = (
  settings: Pick<AppSettings, "headersTimeoutSeconds" | "requestTimeoutSeconds" | "keepAliveTimeoutSeconds" | "maxConnections">
): Server => {
  const server = new DrainingServer({
    headersTimeout: Math.min(settings.headersTimeoutSeconds, settings.requestTimeoutSeconds) * 1000,
    requestTimeout: settings.requestTimeoutSeconds * 1000,
    keepAliveTimeout: settings.keepAliveTimeoutSeconds * 1000,
    connectionsCheckingInterval: 1000
  })
  const connections = server.open

  server.on("connection", (socket: Socket) => {
    connections.set(socket, { active: 0, idleSince: Date.now() })
    socket.once("close", () => connections.delete(socket))
    if (server.draining) return
    if (connections.size > settings.maxConnections) {
      // Over the cap: close the longest-idle connection other than this one, else this one.
      let victim: Socket = socket
      let oldest = Number.POSITIVE_INFINITY
      for (const [s, c] of connections) {
        if (s !== socket && c.active === 0 && c.idleSince < oldest) {
          oldest = c.idleSince
          victim = s
        }
      }
      victim.destroy()
    }
  })

  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    const c = connections.get(req.socket)
    if (c !== undefined) c.active++
    if (server.draining) res.setHeader("connection", "close")
    let done = false
    const finish = () => {
      if (done) return
      done = true
      if (c !== undefined) {
        c.active--
        c.idleSince = Date.now()
      }
    }
    res.once("finish", finish)
    res.once("close", finish)
  })

  server.on("clientError", (error: NodeJS.ErrnoException, socket: Socket) => {
    if (error.code === "ECONNRESET" || !socket.writable) {
      socket.destroy()
      return
    }
    const [status, code, detail] = refusalOf(error)
    socket.end(rawProblem(status, code, detail))
  })
  return server
}

/** Whether `server` (one made by makeNodeServer) is shutting down: its answers then close their connections. */
export const isDraining = (server: Server): boolean => server instanceof DrainingServer && server.draining
