/**
 * `GET /metrics` on its own listener (HCC_METRICS_PORT, bound to HCC_METRICS_HOST, 127.0.0.1 by
 * default), never on the API's port: the API's port lets nothing but the probes and the documents
 * answer there without a token, and a scraper should not need an HCC token. Off unless the port is
 * set (docs/api.md, "Metrics").
 *
 * With `--workers` the primary serves it and asks every worker for its numbers over the cluster's
 * IPC channel; each sample carries `worker="<id>"` (the primary's own process series `primary`).
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import cluster from "node:cluster"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { AppConfig } from "../config/AppConfig.ts"
import { mergeExpositions, PROMETHEUS_CONTENT_TYPE, scrape } from "./Metrics.ts"

const ASK = "hcc:metrics:ask"
const ANSWER = "hcc:metrics:answer"
/** How long the primary waits for a worker's numbers before answering without them. */
const WORKER_TIMEOUT_MS = 2000

/** In a worker: answers the primary's scrape requests. */
const answerPrimary = Layer.effectDiscard(
  Effect.acquireRelease(
    Effect.sync(() => {
      const onMessage = (message: unknown) => {
        if (typeof message === "object" && message !== null && (message as { type?: unknown }).type === ASK) {
          process.send?.({ type: ANSWER, id: (message as { id: unknown }).id, text: scrape() })
        }
      }
      process.on("message", onMessage)
      return onMessage
    }),
    (onMessage) => Effect.sync(() => void process.off("message", onMessage))
  )
)

/** In the primary: every live worker's text, merged with the primary's own. */
const collectCluster = async (): Promise<string> => {
  const workers = Object.values(cluster.workers ?? {}).filter((w) => w !== undefined && w.isConnected())
  const id = Math.random().toString(36).slice(2)
  const answers = await Promise.all(workers.map((w) =>
    new Promise<{ worker: string; text: string } | undefined>((resolve) => {
      const timer = setTimeout(() => done(undefined), WORKER_TIMEOUT_MS)
      const onMessage = (message: unknown) => {
        const m = message as { type?: unknown; id?: unknown; text?: unknown }
        if (m?.type === ANSWER && m.id === id && typeof m.text === "string") done({ worker: String(w!.id), text: m.text })
      }
      const done = (value: { worker: string; text: string } | undefined) => {
        clearTimeout(timer)
        w!.off("message", onMessage)
        resolve(value)
      }
      w!.on("message", onMessage)
      w!.send({ type: ASK, id })
    })
  ))
  return mergeExpositions([{ worker: "primary", text: scrape() }, ...answers.filter((a) => a !== undefined)])
}

/** The metrics listener: GET /metrics answers `collect()`'s text; everything else 404. */
const listen = (host: string, port: number, collect: () => Promise<string>) =>
  Effect.acquireRelease(
    Effect.callback<Server, Error>((resume) => {
      const server = createServer((req, res) => {
        const path = (req.url ?? "/").split("?", 1)[0]
        if (path !== "/metrics" || (req.method !== "GET" && req.method !== "HEAD")) {
          res.writeHead(path === "/metrics" ? 405 : 404, { "content-type": "text/plain; charset=utf-8", ...(path === "/metrics" ? { allow: "GET, HEAD" } : {}) })
          res.end(path === "/metrics" ? "GET /metrics\n" : "Only /metrics is served here.\n")
          return
        }
        collect().then(
          (text) => {
            res.writeHead(200, { "content-type": PROMETHEUS_CONTENT_TYPE, "cache-control": "no-store" })
            res.end(req.method === "HEAD" ? undefined : text)
          },
          () => {
            res.writeHead(500, { "content-type": "text/plain; charset=utf-8" })
            res.end("metrics unavailable\n")
          }
        )
      })
      server.once("error", (e) => resume(Effect.fail(e)))
      server.listen(port, host, () => resume(Effect.succeed(server)))
    }),
    (server) => Effect.callback<void>((resume) => void server.close(() => resume(Effect.void)))
  ).pipe(
    Effect.tap((server) => {
      const address = server.address() as AddressInfo
      return Effect.logInfo("metrics listening").pipe(Effect.annotateLogs({ host: address.address, port: address.port, path: "/metrics", pid: process.pid }))
    })
  )

/**
 * Metrics for one serving process: its own listener when HCC_METRICS_PORT is set, or, in a cluster
 * worker, answers to the primary.
 */
export const layer = Layer.unwrap(Effect.gen(function*() {
  const config = yield* AppConfig
  if (cluster.isWorker) return answerPrimary
  if (config.metricsPort === undefined) return Layer.empty
  return Layer.effectDiscard(listen(config.metricsHost, config.metricsPort, () => Promise.resolve(scrape())))
}))

/** Metrics for a cluster primary: the listener, gathering every worker's numbers. */
export const primary = (config: AppConfig["Service"]) =>
  config.metricsPort === undefined ? Effect.void : Effect.asVoid(listen(config.metricsHost, config.metricsPort, collectCluster))
