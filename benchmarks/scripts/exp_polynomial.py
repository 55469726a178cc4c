#!/usr/bin/env python3
"""The exhaustive accuracy check of the softmax exponential's polynomial (FloatExponential in the CPU
engine, io.embednorm.engine.cpu), with the fit that produced it.

exp(x) = 2^n * (1 + r + r^2 * P(r)), x = n*ln2 + r, |r| <= ln2/2, evaluated as FloatExponential does
in float32 (Cody-Waite with LN2_HIGH/LN2_LOW, Horner, no fused multiply-add; numpy float32 rounds each
operation as Java does). Fits P of degree 2-4 for exp's relative error (Lawson's iteration towards
minimax on 20,000 points) and rounds the coefficients to float32 (degree 3 gives FloatExponential's
P0-P3). Each fit and the peer, Cephes' degree-5 polynomial, is checked against exp in float64: the
largest error in ulp of the correctly rounded result and the largest relative error, normal results
only (the others lie far below any tolerance). Prints to stdout; needs numpy.

    python3 benchmarks/scripts/exp_polynomial.py               # 5 million random arguments
    python3 benchmarks/scripts/exp_polynomial.py --exhaustive  # every float32 in [-87.68, 0]
"""
import sys

import numpy as np

F32 = np.float32
LOG2_E = F32(1.44269504088896341)
ROUNDING = F32(12582912.0)  # 1.5 * 2^23
ROUNDING_BITS = np.array([ROUNDING]).view(np.int32)[0]
LN2_HIGH = F32(0.693359375)
LN2_LOW = F32(-2.12194440e-4)
FLOOR = F32(-88.0)
CEPHES = [1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1,
          5.0000001201e-1]


def exp32(x, coefficients):
    """FloatExponential.exp element-wise with P's coefficients, highest degree first."""
    x = np.maximum(x, FLOOR).astype(F32)
    rounded = (x * LOG2_E + ROUNDING).astype(F32)
    n = (rounded - ROUNDING).astype(F32)
    r = ((x - n * LN2_HIGH) - n * LN2_LOW).astype(F32)
    p = np.full_like(r, F32(coefficients[0]))
    for c in coefficients[1:]:
        p = (p * r + F32(c)).astype(F32)
    mantissa = ((p * (r * r)) + r + F32(1)).astype(F32)
    bits = ((rounded.view(np.int32) + np.int32(127 - ROUNDING_BITS)) << np.int32(23)).astype(np.int32)
    return (mantissa * bits.view(F32)).astype(F32)


def fit(degree):
    r = np.linspace(-0.3466, 0.3466, 20001)
    r = r[r != 0]
    target = (np.expm1(r) - r) / r**2
    weight = r**2 / np.exp(r)  # an error in P, as exp's relative error
    basis = np.vander(r, degree + 1)
    u = np.ones_like(r)
    for _ in range(200):
        w = np.sqrt(u) * weight
        c, *_ = np.linalg.lstsq(basis * w[:, None], target * w, rcond=None)
        error = np.abs((basis @ c - target) * weight)
        u = u * error
        u /= u.sum()
    return [float(F32(v)) for v in c], error.max()


def errors(coefficients, exhaustive):
    if exhaustive:
        low = 0x80000000
        high = int(np.array([F32(-87.68)]).view(np.uint32)[0])
        pieces = [np.arange(s, min(s + (1 << 24), high + 1), dtype=np.uint64).astype(np.uint32).view(F32)
                  for s in range(low, high + 1, 1 << 24)]
    else:
        rng = np.random.default_rng(5)
        pieces = [(-rng.random(4_000_000) * 87.68).astype(F32), (-rng.random(1_000_000) * 2).astype(F32)]
    worst_ulp, worst_x, worst_relative = 0.0, None, 0.0
    for x in pieces:
        value = exp32(x, coefficients).astype(np.float64)
        reference = np.exp(x.astype(np.float64))
        normal = reference >= np.finfo(F32).tiny
        ulp = np.where(normal, np.abs(value - reference) / np.spacing(reference.astype(F32)), 0)
        i = int(ulp.argmax())
        if ulp[i] > worst_ulp:
            worst_ulp, worst_x = float(ulp[i]), float(x[i])
        worst_relative = max(worst_relative, float((np.abs(value - reference) / reference)[normal].max()))
    return worst_ulp, worst_x, worst_relative


def main():
    exhaustive = "--exhaustive" in sys.argv
    print("every float32 in [-87.68, 0]" if exhaustive else "5,000,000 random floats in [-87.68, 0]")
    candidates = [("Cephes, degree 5", CEPHES, None)]
    for degree in (2, 3, 4):
        c, fit_error = fit(degree)
        candidates.append(("fit, degree %d" % degree, c, fit_error))
    for name, c, fit_error in candidates:
        ulp, x, relative = errors(c, exhaustive)
        fitted = "" if fit_error is None else "  (fit %.3g)" % fit_error
        print("%-17s P = %s" % (name, ", ".join("%.10ef" % v for v in c)))
        print("%17s largest error %.3f ulp (at x = %.7g), %.3g relative%s" % ("", ulp, x, relative, fitted))


if __name__ == "__main__":
    main()
