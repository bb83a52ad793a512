/**
 * Optional OpenTelemetry export over OTLP/HTTP, with Effect's own exporters (`effect/observability`
 * Otlp: traces, metrics and logs). Off unless an OTLP endpoint is configured with the standard
 * variables (`OTEL_EXPORTER_OTLP_ENDPOINT`, or a signal's own `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` …);
 * `OTEL_SDK_DISABLED=true` turns it off again. The other standard variables apply as the
 * OpenTelemetry specification defines them: `OTEL_EXPORTER_OTLP_PROTOCOL` (`http/protobuf`, the
 * default, or `http/json`), `OTEL_EXPORTER_OTLP_HEADERS`, `…_COMPRESSION`, `…_TIMEOUT`,
 * `OTEL_{TRACES,METRICS,LOGS}_EXPORTER` (default `otlp` once an endpoint is set; `none` turns a
 * signal off), `OTEL_SERVICE_NAME` (default `hcc`), `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_BSP_*`,
 * `OTEL_METRIC_EXPORT_INTERVAL`.
 *
 * What is exported: one server span per request (parented by an incoming `traceparent`; its trace
 * id is the one in the request's log line and in the answer's `traceparent`), the metrics of
 * Metrics.ts, and the service's own log records (never request values: the request lines are
 * written to stdout only). Span attributes never include request headers (Effect records none by
 * default) or bodies.
 */
import * as ConfigProvider from "effect/ConfigProvider"
import * as Layer from "effect/Layer"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as Otlp from "effect/observability/Otlp"
import * as OtlpExporter from "effect/observability/OtlpExporter"
import * as OtlpSerialization from "effect/observability/OtlpSerialization"
import { SERVICE_VERSION } from "../version.ts"

const SIGNALS = ["TRACES", "METRICS", "LOGS"] as const

/** Whether the environment asks for export. */
export const otlpEnabled = (env: Record<string, string | undefined>): boolean =>
  env.OTEL_SDK_DISABLED?.trim().toLowerCase() !== "true" &&
  [env.OTEL_EXPORTER_OTLP_ENDPOINT, ...SIGNALS.map((s) => env[`OTEL_EXPORTER_OTLP_${s}_ENDPOINT`])].some((v) => v !== undefined && v.trim() !== "")

/**
 * The environment as the exporters read it: the specification's defaults filled in where Effect's
 * readers have none (each signal's exporter `otlp`, the service's name and version).
 */
export const otlpEnv = (env: Record<string, string | undefined>): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(env)) if (v !== undefined) out[k] = v
  for (const s of SIGNALS) out[`OTEL_${s}_EXPORTER`] ??= "otlp"
  out.OTEL_SERVICE_NAME ??= "hcc"
  out.OTEL_SERVICE_VERSION ??= SERVICE_VERSION
  return out
}

/** The exporters, or nothing when export is off. */
export const layer = (env: Record<string, string | undefined> = process.env): Layer.Layer<OtlpExporter.Flusher> => {
  if (!otlpEnabled(env)) return OtlpExporter.layerFlusher
  const resolved = otlpEnv(env)
  const serialization = resolved.OTEL_EXPORTER_OTLP_PROTOCOL?.trim() === "http/json" ? OtlpSerialization.layerJson : OtlpSerialization.layerProtobuf
  // process.pid tells workers of one machine apart (each exports its own).
  return Otlp.layerFromConfig({ loggerMergeWithExisting: true, resource: { attributes: { "process.pid": process.pid } } }).pipe(
    Layer.provide(serialization),
    Layer.provide(FetchHttpClient.layer),
    Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env: resolved }))),
    Layer.orDie
  )
}
