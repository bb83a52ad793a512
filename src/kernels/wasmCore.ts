/**
 * The WASM implementation of the kernels over one core instance, as plain functions: each call is
 * one batch in the instance's arena (inputs copied in, results copied out, scratch freed when it
 * returns). Shapes are checked around it (checks.ts).
 */
import type { Arena } from "./Arena.ts"
import { familyIndex, glmResult, withShapeChecks } from "./checks.ts"
import { type Column, type CoreKernels, GLM_MAX_ITERATIONS, type Panel } from "./types.ts"

/** A column copied into the core's memory, its data then read from there (one copy, not two). */
const residentColumn = <A extends Float64Array | Int32Array | Uint8Array>(arena: Arena, data: A): Column<A> => {
  const { ptr, view } = arena.residentView(data)
  return { data: view, ptr }
}


/**
 * Patients whose panelWindows or panelWindowsOf outputs one batch holds at most. Above it a
 * panelWindows call runs as panelWindowsOf over the selected patients of each piece of this many,
 * and a panelWindowsOf call over each piece of its list: the same numbers (the kernels compute each
 * patient alike), with the core's scratch bounded — the whole population's outputs (axes ×
 * patients × 3 f64: 1.9 GB at ten million patients and 8 axes), or a cohort of millions', would
 * not fit in one thread's share of the core's 4 GiB beside the panel.
 */
export const WINDOWS_PER_BATCH = 1_000_000

/**
 * Rows per call when everyone's histograms of a tenths panel are made: V8 runs a WASM function's
 * first calls in its baseline code and a call stays in the code it began in, so one call over a
 * whole large panel would run unoptimized throughout; short calls move to the optimized code as
 * soon as it is ready.
 */
const HISTOGRAM_ROWS_PER_CALL = 65_536

/**
 * How many patients a mask selects. A function that ends with its loop: V8 compiles a long loop
 * while it runs, and code after it that has not yet run would make that code bail out on every
 * later call (src/plugin/hotLoops.ts).
 */
const selectedIn = (mask: Uint8Array): number => {
  let selected = 0
  for (let p = 0; p < mask.length; p++) if (mask[p] !== 0) selected++
  return selected
}

/** panelWindows' outputs, in the order the kernel writes them. */
const WINDOW_OUTPUTS = ["n", "mean", "slope"] as const
/** An output of panelWindows not asked for. */
const NO_OUTPUT = new Float64Array(0)

/** A kernel's f64 output of `length` entries, over a SharedArrayBuffer when asked. */
const outputArray = (length: number, shared: boolean): Float64Array =>
  new Float64Array(shared ? new SharedArrayBuffer(length * 8) : new ArrayBuffer(length * 8))

/**
 * The panel kernels' helpers over one core instance: each storage's kernels, everyone's histograms
 * of a tenths panel, and panelWindows / panelWindowsOf in pieces that fit one thread's arena.
 */
const panelHelpers = (arena: Arena, windowsPerBatch: number) => {
  const core = arena.core
  // The panel kernels for each storage (a tenths panel: the `…Tenths` exports).
  const wide = core
  const tenths = {
    panelMeanMask: core.panelMeanMaskTenths,
    panelWindows: core.panelWindowsTenths,
    panelWindowsOf: core.panelWindowsOfTenths,
    panelTrend: core.panelTrendTenths
  }
  const kernelsOf = (panel: Panel) => (panel.data instanceof Uint8Array ? tenths : wide)
  /**
   * Everyone's histograms of each tenths panel (panelSums' `everyone`: u32 × 256 per axis and
   * month, as bytes), made by the first panelSums over it that selects more than half of the patients.
   */
  const everyoneOf = new WeakMap<Panel, Uint8Array>()
  /**
   * The histograms panelSums over `mask` counts less from — when it selects more than half of a
   * tenths panel's patients (the kernel takes them as that choice made) — else undefined.
   */
  const histogramsFor = (panel: Panel, mask: Uint8Array): Uint8Array | undefined => {
    if (!(panel.data instanceof Uint8Array) || selectedIn(mask) * 2 <= panel.nPatients) return undefined
    const known = everyoneOf.get(panel)
    if (known !== undefined) return known
    const made = arena.batch((s) => {
      const perAxis = panel.nMonths * 1024
      const out = s.alloc(panel.nAxes * perAxis)
      new Uint8Array(core.memory.buffer, out, panel.nAxes * perAxis).fill(0)
      for (let axis = 0; axis < panel.nAxes; axis++) {
        for (let first = 0; first < panel.nPatients; first += HISTOGRAM_ROWS_PER_CALL) {
          core.panelHistogramsTenths(panel.ptr, panel.nPatients, panel.nMonths, axis, first, Math.min(HISTOGRAM_ROWS_PER_CALL, panel.nPatients - first), out + axis * perAxis)
        }
      }
      return s.u8(out, panel.nAxes * perAxis)
    })
    everyoneOf.set(panel, made)
    return made
  }
  /**
   * panelWindowsOf over `patients` (their windows [from[j], to[j])) in one batch; `read` gets the
   * outputs (n, mean, slope: axes × patients) as views of the core's memory, valid during the call.
   */
  const windowsOfPiece = (panel: Panel, axes: Int32Array, patients: Int32Array, from: Int32Array, to: Int32Array, read: (parts: ReadonlyArray<Float64Array>) => void) =>
    arena.batch((s) => {
      const count = patients.length
      const [on, om, os] = [0, 1, 2].map(() => s.alloc(axes.length * count * 8))
      kernelsOf(panel).panelWindowsOf(panel.ptr, panel.nPatients, panel.nMonths, s.copyIn(axes), axes.length, s.copyIn(patients), count, s.copyIn(from), s.copyIn(to), on!, om!, os!)
      // Read in place: no copy of the piece's outputs out of the core first.
      read([on!, om!, os!].map((ptr) => new Float64Array(core.memory.buffer, ptr, axes.length * count)))
    })
  /** panelWindows a piece of windowsPerBatch patients at a time (see WINDOWS_PER_BATCH); only the outputs `kept`. */
  const windowsInPieces = (panel: Panel, axes: Int32Array, from: Int32Array, to: Int32Array, mask: Uint8Array, kept: ReadonlyArray<boolean>, shared: boolean) => {
    const n = panel.nPatients
    const size = axes.length * n
    // An unselected patient's entries, as panelWindows gives them: no score, no mean, no slope.
    const out = [0, Number.NaN, Number.NaN].map((unselected, o) => (kept[o] ? outputArray(size, shared).fill(unselected) : NO_OUTPUT))
    for (let first = 0; first < n; first += windowsPerBatch) {
      const last = Math.min(n, first + windowsPerBatch)
      let count = 0
      for (let p = first; p < last; p++) if (mask[p] !== 0) count++
      if (count === 0) continue
      const patients = new Int32Array(count)
      for (let p = first, j = 0; p < last; p++) if (mask[p] !== 0) patients[j++] = p
      windowsOfPiece(panel, axes, patients, patients.map((p) => from[p]!), patients.map((p) => to[p]!), (parts) => {
        // A piece of consecutive patients is a block per axis; otherwise each entry goes to its patient.
        parts.forEach((part, o) => {
          if (!kept[o]) return
          const whole = out[o]!
          for (let k = 0; k < axes.length; k++) {
            if (count === last - first) {
              whole.set(part.subarray(k * count, (k + 1) * count), k * n + first)
              continue
            }
            for (let j = 0; j < count; j++) whole[k * n + patients[j]!] = part[k * count + j]!
          }
        })
      })
    }
    return { n: out[0]!, mean: out[1]!, slope: out[2]! }
  }
  /** panelWindowsOf a list of patients, windowsPerBatch of them at a time (a large cohort's outputs would not fit in one thread's arena). */
  const windowsOfInPieces = (panel: Panel, axes: Int32Array, patients: Int32Array, from: Int32Array, to: Int32Array) => {
    const count = patients.length
    const out = [0, 1, 2].map(() => new Float64Array(axes.length * count))
    for (let first = 0; first < count; first += windowsPerBatch) {
      const last = Math.min(count, first + windowsPerBatch)
      windowsOfPiece(panel, axes, patients.subarray(first, last), from.subarray(first, last), to.subarray(first, last), (parts) => {
        parts.forEach((part, o) => {
          for (let k = 0; k < axes.length; k++) out[o]!.set(part.subarray(k * (last - first), (k + 1) * (last - first)), k * count + first)
        })
      })
    }
    return { n: out[0]!, mean: out[1]!, slope: out[2]! }
  }
  return { kernelsOf, histogramsFor, windowsInPieces, windowsOfInPieces }
}

/** The kernels over series and models (correlations, lagged correlation, trajectories, rules, GLM) over one core instance. */
const seriesKernels = (arena: Arena): Pick<CoreKernels, "correlationMatrix" | "laggedXcorr" | "fitTrajectories" | "evaluateRules" | "fitGlm" | "linearPredictor"> => {
  const core = arena.core
  return {
    correlationMatrix: (data, nSeries, nAxes, nPoints, options) => {
      const nPairs = (nAxes * (nAxes - 1)) / 2
      const spearman = options?.spearman !== false
      return arena.batch((s) => {
        const d = s.copyIn(data)
        const op = s.alloc(nSeries * nPairs * 8)
        const os = spearman ? s.alloc(nSeries * nPairs * 8) : 0
        const oc = s.alloc(nSeries * nPairs * 8)
        const scratch = s.alloc(nPoints * 36 + 64)
        core.correlationMatrix(d, nSeries, nAxes, nPoints, op, os, oc, scratch)
        return {
          pearson: s.f64(op, nSeries * nPairs),
          spearman: spearman ? s.f64(os, nSeries * nPairs) : new Float64Array(nSeries * nPairs).fill(Number.NaN),
          count: s.f64(oc, nSeries * nPairs)
        }
      })
    },
    laggedXcorr: (xs, ys, nSeries, n, maxLag) =>
      arena.batch((s) => {
        const px = s.copyIn(xs)
        const py = s.copyIn(ys)
        const outs = [0, 1, 2, 3].map(() => s.alloc(nSeries * 8))
        core.laggedXcorr(px, py, nSeries, n, maxLag, outs[0]!, outs[1]!, outs[2]!, outs[3]!, s.alloc(n * 16 + 32))
        return { lag: s.f64(outs[0]!, nSeries), r: s.f64(outs[1]!, nSeries), p: s.f64(outs[2]!, nSeries), n: s.f64(outs[3]!, nSeries) }
      }),
    fitTrajectories: (data, nSeries, nPoints, horizon) =>
      arena.batch((s) => {
        const d = s.copyIn(data)
        const om = s.alloc(nSeries * 8)
        const opar = s.alloc(nSeries * 32)
        const oa = s.alloc(nSeries * 40)
        const [pp, pl, ph] = [0, 1, 2].map(() => s.alloc(nSeries * horizon * 8))
        core.fitTrajectories(d, nSeries, nPoints, horizon, om, opar, oa, pp!, pl!, ph!, s.alloc(nPoints * 24 + 256))
        return {
          model: s.f64(om, nSeries),
          params: s.f64(opar, nSeries * 4),
          aicc: s.f64(oa, nSeries * 5),
          pred: s.f64(pp!, nSeries * horizon),
          lo: s.f64(pl!, nSeries * horizon),
          hi: s.f64(ph!, nSeries * horizon)
        }
      }),
    evaluateRules: (data, nPatients, nAxes, nPoints, axisCodes) =>
      arena.batch((s) => {
        const d = s.copyIn(data)
        const codes = s.copyIn(axisCodes)
        const om = s.alloc(nPatients * 4)
        const oa = s.alloc(nPatients * nAxes * 4)
        core.evaluateRules(d, nPatients, nAxes, nPoints, codes, om, oa, s.alloc((2 * nAxes * nPoints + 4 * nPoints + 2 * nAxes) * 8 + 64))
        return { mask: s.i32(om, nPatients), axisMask: s.i32(oa, nPatients * nAxes) }
      }),
    fitGlm: (x, y, offset, n, p, family) =>
      arena.batch((s) => {
        const [ob, oc, oi] = [p * 8, p * p * 8, 24].map((bytes) => s.alloc(bytes))
        const status = core.fitGlm(s.copyIn(x), s.copyIn(y), s.copyIn(offset), n, p, familyIndex(family), GLM_MAX_ITERATIONS, ob!, oc!, oi!, s.alloc((p * p + 2 * p) * 8))
        return glmResult(status, s.f64(ob!, p), s.f64(oc!, p * p), s.f64(oi!, 3))
      }),
    linearPredictor: (x, n, p, beta) => {
      return arena.batch((s) => {
        const out = s.alloc(n * 8)
        core.linearPredictor(s.copyIn(x), n, p, s.copyIn(beta), out)
        return s.f64(out, n)
      })
    }
  }
}

/** The WASM implementation over one core instance, as plain functions. */
const wasmCore = (arena: Arena, windowsPerBatch: number): CoreKernels => {
  const core = arena.core
  const { histogramsFor, kernelsOf, windowsInPieces, windowsOfInPieces } = panelHelpers(arena, windowsPerBatch)
  return {
    implementation: "wasm",
    ...seriesKernels(arena),
    columnF64: (data) => residentColumn(arena, data),
    columnI32: (data) => residentColumn(arena, data),
    columnU8: (data) => residentColumn(arena, data),
    maskRange: (col, lo, hi, maskIn) =>
      arena.batch((s) => {
        const m = s.copyIn(maskIn)
        core.maskRange(col.ptr, col.data.length, lo, hi, m, m)
        return s.u8(m, maskIn.length)
      }),
    maskInSet: (col, set, maskIn) =>
      arena.batch((s) => {
        const m = s.copyIn(maskIn)
        core.maskInSet(col.ptr, col.data.length, s.copyIn(set), set.length, m, m)
        return s.u8(m, maskIn.length)
      }),
    maskFlag: (flags, maskIn) =>
      arena.batch((s) => {
        const m = s.copyIn(maskIn)
        core.maskFlag(flags.ptr, flags.data.length, m, m)
        return s.u8(m, maskIn.length)
      }),
    maskCount: (mask) => arena.batch((s) => core.maskCount(s.copyIn(mask), mask.length)),
    groupStats: (groups, values, mask, nGroups) =>
      arena.batch((s) => {
        const [c, sum, mean] = [0, 1, 2].map(() => s.alloc(nGroups * 8))
        core.groupStats(groups.ptr, values.ptr, s.copyIn(mask), mask.length, nGroups, c!, sum!, mean!)
        return { count: s.f64(c!, nGroups), sum: s.f64(sum!, nGroups), mean: s.f64(mean!, nGroups) }
      }),
    quantiles: (values, mask, qs) =>
      arena.batch((s) => {
        const out = s.alloc(qs.length * 8)
        const n = core.quantiles(values.ptr, s.copyIn(mask), mask.length, s.copyIn(Float64Array.from(qs)), qs.length, out, s.alloc(values.data.length * 8))
        return { values: s.f64(out, qs.length), n }
      }),
    panel: (data, nPatients, nAxes, nMonths) => {
      const { ptr, view } = arena.residentView(data)
      return { data: view, ptr, nPatients, nAxes, nMonths }
    },
    panelMeanMask: (panel, axis, from, to, lo, hi, maskIn) =>
      arena.batch((s) => {
        const m = s.copyIn(maskIn)
        kernelsOf(panel).panelMeanMask(panel.ptr, panel.nPatients, panel.nMonths, axis, from, to, lo, hi, m, m)
        return s.u8(m, maskIn.length)
      }),
    panelWindows: (panel, axes, from, to, mask, options) => {
      const size = axes.length * panel.nPatients
      const kept = WINDOW_OUTPUTS.map((o) => options?.outputs?.includes(o) ?? true)
      const shared = options?.shared === true
      if (panel.nPatients > windowsPerBatch) return windowsInPieces(panel, axes, from, to, mask, kept, shared)
      return arena.batch((s) => {
        const [on, om, os] = [0, 1, 2].map(() => s.alloc(size * 8))
        kernelsOf(panel).panelWindows(panel.ptr, panel.nPatients, panel.nMonths, s.copyIn(axes), axes.length, s.copyIn(from), s.copyIn(to), s.copyIn(mask), on!, om!, os!)
        const copyOut = (ptr: number) => {
          const out = outputArray(size, shared)
          out.set(new Float64Array(core.memory.buffer, ptr, size))
          return out
        }
        const [n, mean, slope] = [on!, om!, os!].map((ptr, o) => (kept[o] ? copyOut(ptr) : NO_OUTPUT))
        return { n: n!, mean: mean!, slope: slope! }
      })
    },
    panelWindowsOf: (panel, axes, patients, from, to) => windowsOfInPieces(panel, axes, patients, from, to),
    panelTrend: (panel, axes, from, to, monthGroup, nGroups, mask) =>
      arena.batch((s) => {
        const [c, sum] = [0, 1].map(() => s.alloc(axes.length * nGroups * 8))
        const slope = s.alloc(axes.length * 24)
        kernelsOf(panel).panelTrend(panel.ptr, panel.nPatients, panel.nMonths, s.copyIn(axes), axes.length, from, to, s.copyIn(monthGroup), nGroups, s.copyIn(mask), c!, sum!, slope, s.alloc(panel.nMonths * 16))
        return { count: s.f64(c!, axes.length * nGroups), sum: s.f64(sum!, axes.length * nGroups), slope: s.f64(slope, axes.length * 3) }
      }),
    panelSums: (panel, axes, from, to, monthGroup, nGroups, mask) => {
      const everyone = histogramsFor(panel, mask)
      return arena.batch((s) => {
        const [c, sum] = [0, 1].map(() => s.alloc(axes.length * nGroups * 8))
        const args = [panel.ptr, panel.nPatients, panel.nMonths, s.copyIn(axes), axes.length, from, to, s.copyIn(monthGroup), nGroups, s.copyIn(mask), c!, sum!] as const
        // Scratch: each month's count and sum; over tenths also a histogram of 256 u32 per month.
        if (panel.data instanceof Uint8Array) core.panelSumsTenths(...args, s.alloc(panel.nMonths * (16 + 1024)), everyone === undefined ? 0 : s.copyIn(everyone))
        else core.panelSums(...args, s.alloc(panel.nMonths * 16))
        return { count: s.f64(c!, axes.length * nGroups), sum: s.f64(sum!, axes.length * nGroups) }
      })
    },
    panelPeriods: (panel, axes, from, to, monthGroup, nGroups, mask) =>
      arena.batch((s) => {
        const size = axes.length * nGroups
        const [op, oss, osn, onn] = [0, 1, 2, 3].map(() => s.alloc(size * 8))
        const run = panel.data instanceof Uint8Array ? core.panelPeriodsTenths : core.panelPeriods
        run(panel.ptr, panel.nPatients, panel.nMonths, s.copyIn(axes), axes.length, from, to, s.copyIn(monthGroup), nGroups, s.copyIn(mask), op!, oss!, osn!, onn!, s.alloc(nGroups * 16))
        return { patients: s.f64(op!, size), sumSquares: s.f64(oss!, size), sumCounts: s.f64(osn!, size), countSquares: s.f64(onn!, size) }
      })
  }
}

/** The WASM implementation over one core instance, as plain functions, its calls' shapes checked. */
export const makeWasmCore = (arena: Arena, windowsPerBatch: number = WINDOWS_PER_BATCH): CoreKernels => withShapeChecks(wasmCore(arena, windowsPerBatch))
