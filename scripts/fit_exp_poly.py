#!/usr/bin/python3
"""Fits the coefficients of the float32 kernels' exp (Note [Vectorised exp] in
core/src/kernels/vec_math.h): e^r = 1 + r + r^2 (c2 + c3 r + c4 r^2 + c5 r^3 + c6 r^4) for r in
[-ln2/2, ln2/2], minimising the maximum relative error by iteratively reweighted least squares.
Prints the coefficients rounded to float32, c6 first (kP0 ... kP4), and the relative error of the
polynomial with them.

    /usr/bin/python3 scripts/fit_exp_poly.py    # needs python3-numpy (apt; python3-torch depends on it)
"""
import numpy as np

DEGREE = 4  # of the polynomial in r that multiplies r^2
half_ln2 = np.log(2) / 2
r = np.cos(np.linspace(0, np.pi, 4001)) * half_ln2  # Chebyshev points
exact = np.exp(r)
powers = np.stack([r**2 * r**k for k in range(DEGREE + 1)], 1) / exact[:, None]
target = (exact - 1 - r) / exact
weight = np.ones_like(r)
for _ in range(60):
    c, *_ = np.linalg.lstsq(powers * weight[:, None], target * weight, rcond=None)
    err = np.abs(powers @ c - target)
    weight *= (err / err.max() + 1e-3) ** 0.5
    weight /= weight.max()

c32 = c.astype(np.float32).astype(np.float64)
dense = np.linspace(-half_ln2, half_ln2, 200001)
approx = 1 + dense + dense**2 * np.polyval(c32[::-1], dense)
for i, v in enumerate(c.astype(np.float32)[::-1]):
    print(f"constexpr float kP{i} = {v:.10e}f;")
print(f"max relative error with float32 coefficients: {np.abs(approx / np.exp(dense) - 1).max():.3g}")
