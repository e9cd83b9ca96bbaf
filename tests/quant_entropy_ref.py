#!/usr/bin/env python3
"""quant_entropy_ref.py FILE — the entropy (KL) calibration threshold of
the float32 values in FILE, in numpy: MXNet's _get_optimal_threshold over
a histogram of |x| (8001 bins up to max |x|), candidates clipping at bin
128 (127 levels, signed data) or 255 (255 levels, data >= 0) and up, the
first bin counted as the second. An
independent reference for test-quant-calib (nl-quant-calib.c): prints the
threshold and max |x|."""
import sys

import numpy as np

BINS = 8001


def smooth(p, eps=0.0001):
    zeros = p == 0
    n_zeros = zeros.sum()
    if n_zeros == p.size:
        return None
    eps1 = eps * n_zeros / (p.size - n_zeros)
    return p + np.where(zeros, eps, -eps1)


def kl(p, q):
    p = p / p.sum()
    q = q / q.sum()
    m = p > 0
    return float(np.sum(p[m] * np.log(p[m] / q[m])))


def threshold(x):
    x = x[np.isfinite(x)].astype(np.float64)
    amax = max(abs(x.min()), abs(x.max()))
    unsigned = x.min() >= 0
    levels, first = (255, 255) if unsigned else (127, 128)
    hist, edges = np.histogram(np.abs(x), bins=BINS, range=(0, amax))
    hist = hist.astype(np.float64)
    # a ReLU's spike of exact zeros counts as its neighbour bin
    # (pytorch-quantization's entropy calibrator: bins[0] = bins[1])
    hist[0] = hist[1]
    best, best_kl = BINS, np.inf
    for i in range(first, BINS + 1):
        sliced = hist[:i]
        p = sliced.copy()
        p[-1] += hist[i:].sum()
        nonzero = (p != 0).astype(np.float64)
        m = i // levels
        # levels of m bins, the last one taking the rest; sums of the clipped
        # histogram without its outliers, as MXNet
        sums = sliced[:levels * m].reshape(levels, m).sum(axis=1)
        counts = nonzero[:levels * m].reshape(levels, m).sum(axis=1)
        sums[-1] += sliced[levels * m:].sum()
        counts[-1] += nonzero[levels * m:].sum()
        per = np.divide(sums, counts, out=np.zeros(levels), where=counts > 0)
        width = np.full(levels, m)
        width[-1] += i - levels * m
        q = np.repeat(per, width) * nonzero
        ps, qs = smooth(p), smooth(q)
        d = np.inf if ps is None or qs is None else kl(ps, qs)
        if d < best_kl:
            best, best_kl = i, d
    return edges[best], amax


if __name__ == "__main__":
    t, amax = threshold(np.fromfile(sys.argv[1], dtype=np.float32))
    print("%.9g %.9g" % (t, amax))
