/**
 * Brent's bounded maximisation of a function of one variable (golden section with parabolic steps;
 * R. P. Brent, Algorithms for Minimization without Derivatives, 1973, ch. 5).
 */
const GOLDEN = (Math.sqrt(5) - 1) / 2

/** The maximum of f on [lo, hi], its x found to `tolerance`; the ends are candidates too. */
export const maximise = (f: (x: number) => number, lo: number, hi: number, tolerance: number): { readonly x: number; readonly value: number } => {
  if (hi <= lo) return { x: lo, value: f(lo) }
  const c = 1 - GOLDEN
  let a = lo
  let b = hi
  let x = a + c * (b - a)
  let w = x
  let v = x
  let fx = -f(x)
  let fw = fx
  let fv = fx
  let d = 0
  let e = 0
  for (let iter = 0; iter < 100; iter++) {
    const middle = (a + b) / 2
    const tol1 = 1e-10 * Math.abs(x) + tolerance / 3
    const tol2 = 2 * tol1
    if (Math.abs(x - middle) <= tol2 - (b - a) / 2) break
    let golden = true
    if (Math.abs(e) > tol1) {
      // Parabola through x, w, v.
      let r = (x - w) * (fx - fv)
      let q = (x - v) * (fx - fw)
      let p = (x - v) * q - (x - w) * r
      q = 2 * (q - r)
      if (q > 0) p = -p
      else q = -q
      r = e
      e = d
      if (Math.abs(p) < Math.abs(0.5 * q * r) && p > q * (a - x) && p < q * (b - x)) {
        d = p / q
        const u = x + d
        if (u - a < tol2 || b - u < tol2) d = middle >= x ? tol1 : -tol1
        golden = false
      }
    }
    if (golden) {
      e = (x >= middle ? a : b) - x
      d = c * e
    }
    const u = Math.abs(d) >= tol1 ? x + d : x + (d > 0 ? tol1 : -tol1)
    const fu = -f(u)
    if (fu <= fx) {
      if (u >= x) a = x
      else b = x
      v = w
      fv = fw
      w = x
      fw = fx
      x = u
      fx = fu
    } else {
      if (u < x) a = u
      else b = u
      if (fu <= fw || w === x) {
        v = w
        fv = fw
        w = u
        fw = fu
      } else if (fu <= fv || v === x || v === w) {
        v = u
        fv = fu
      }
    }
  }
  let best = { x, value: -fx }
  for (const end of [lo, hi]) {
    const value = f(end)
    if (value > best.value) best = { x: end, value }
  }
  return best
}
