#!/usr/bin/python3
"""Fits the coefficients of the float32 GELU kernels' erfc (Note [Vectorised GELU] in
core/src/kernels/gelu_simd_impl.h): erfc(w) = exp(-w^2) t Q(t), t = 1 / (1 + w / 2), Q of
degree 8, minimising the maximum relative error over w in [0, 10.5] (past it exp(-w^2) is below
float32's smallest denormal) by iteratively reweighted least squares. Prints the coefficients
rounded to float32 and the fit's relative error before and after that rounding.

    /usr/bin/python3 scripts/fit_erfcx.py    # needs python3-numpy (apt; python3-torch depends on it)
"""
import math

import numpy as np

P, DEGREE = 0.5, 8
erfc = np.vectorize(math.erfc)


def erfcx(w):
    return erfc(w) * np.exp(w * w)


w = np.linspace(0, 10.5, 60001)
t = 1 / (1 + P * w)
y = erfcx(w) / t  # Q's target
powers = np.vstack([t**k for k in range(DEGREE + 1)]).T
weight = np.ones_like(y)
for _ in range(40):
    c, *_ = np.linalg.lstsq(powers * (weight / y)[:, None], y * (weight / y), rcond=None)
    rel = (powers @ c - y) / y
    weight *= 1 + 50 * np.abs(rel) / np.abs(rel).max()
    weight /= weight.mean()
print("max relative error of t Q(t) against erfcx, double coefficients: %.2e" % np.abs(rel).max())
c32 = c.astype(np.float32)
t32 = (1 / (1 + np.float32(P) * w.astype(np.float32))).astype(np.float64)
q = np.zeros_like(w)
for k in range(DEGREE, -1, -1):
    q = q * t32 + float(c32[k])
exact = erfcx(w.astype(np.float32).astype(np.float64))
print("the same with float32 coefficients and t: %.2e" % np.abs((q * t32 - exact) / exact).max())
for k in range(DEGREE + 1):
    print("Q%d = %.9e" % (k, c32[k]))
