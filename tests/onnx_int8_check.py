#!/usr/bin/env python3
"""onnx_int8_check.py DIR ORT_MODULE SOURCE_DIR — test-onnx-int8's reference.

DIR holds what the test program wrote for tests/fixtures/onnx-int8-net.json:
the fp32 weights and running statistics (NAME.bin, raw float32), the hand
made quantization table (table.json) and the INT8 export (int8.onnx). This
script checks the graph (onnx.checker, QDQ pairs where the INT8 executor rounds,
BatchNorms folded into INT8 heads, int8 weights with per-channel scales) and runs the
model in onnxruntime-node (tests/onnx_run.js) on 64 random images, against
numpy's fake-quantized forward pass of the same network computed here from
the fp32 weights: BatchNorm folded into the weights before them, weights
quantized per output channel, values rounded to their point's 8-bit grid
where the INT8 executor rounds them. Exit status 0 when all holds; what was
measured goes to stdout.
"""
import json
import os
import subprocess
import sys

import numpy as np

d, ort, src = sys.argv[1:4]
N, SIDE, MEAN, STD = 64, 12, 0.5, 0.5
f32 = np.float32


def load(name, shape):
    return np.fromfile(os.path.join(d, name + ".bin"), dtype=np.float32).reshape(shape)


table = {r["point"]: r for r in json.load(open(os.path.join(d, "table.json")))["ranges"]}


def fq(x, point):
    """x on point's 8-bit grid: QuantizeLinear then DequantizeLinear."""
    r = table[point]
    lo, hi, div = (0, 255, 255.0) if r["unsigned"] else (-128, 127, 127.0)
    s = f32(f32(r["threshold"]) / f32(div))
    return (np.clip(np.rint(x / s), lo, hi) * s).astype(np.float32)


def conv(x, w, b, pad):
    n, c, h, wd = x.shape
    k = w.shape[2]
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    cols = np.stack([xp[:, :, i:i + h, j:j + wd] for i in range(k) for j in range(k)], axis=2)  # n c kk h w
    y = np.einsum("nckhw,ock->nohw", cols, w.reshape(w.shape[0], c, k * k), dtype=np.float64)
    return (y + (0 if b is None else b[None, :, None, None])).astype(np.float32)


def fold(w, b, bn):
    gamma, beta, mean, var = (load(bn + "." + s, (-1,)) for s in ("gamma", "beta", "running_mean", "running_var"))
    s = gamma / np.sqrt(var + f32(0.001))
    w = w * s.reshape((-1,) + (1,) * (w.ndim - 1))
    b = (np.zeros_like(mean) if b is None else b) - mean
    return w.astype(np.float32), (b * s + beta).astype(np.float32)


def qw(w):
    """Per output channel, symmetric: round (w * 127 / max |w|) * max |w| / 127."""
    m = np.abs(w.reshape(w.shape[0], -1)).max(axis=1).reshape((-1,) + (1,) * (w.ndim - 1))
    return (np.clip(np.rint(w * (f32(127) / m)), -127, 127) * (m / f32(127))).astype(np.float32)


def pool(x, op):
    a, b, c, d = x[:, :, 0::2, 0::2], x[:, :, 0::2, 1::2], x[:, :, 1::2, 0::2], x[:, :, 1::2, 1::2]
    if op == "max":
        return np.maximum(np.maximum(a, b), np.maximum(c, d))
    # summed in onnxruntime's order: a quarter of these averages of 8-bit
    # values lie halfway between two steps, and the order of the float sum
    # decides which way they round
    return (((a + b) + c) + d) / f32(4)


def forward(x, quant):
    """As the INT8 executor runs the fixture: conv1 (one input channel, then
    a pool) in fp32, so the input stays float and so does pool0, rounded at
    relu1's scale where conv2 and the residual sum of conv2's 8-bit step
    read it; the logits stay float."""
    q = fq if quant else (lambda v, p: v)
    wq = qw if quant else (lambda w: w)
    relu = lambda v: np.maximum(v, 0)
    w1, b1 = fold(load("conv1.weight", (8, 1, 3, 3)), load("conv1.bias", (8,)), "bn1")
    p0 = pool(relu(conv(x, w1, b1, 1)), "max")
    w2, b2 = fold(load("conv2.weight", (8, 8, 3, 3)), None, "bn2")
    r2 = q(relu(conv(q(p0, "relu1"), wq(w2), b2, 1) + q(p0, "relu1")), "relu2")
    r3 = q(relu(conv(r2, wq(load("conv3.weight", (16, 8, 3, 3))), load("conv3.bias", (16,)), 1)), "relu3")
    p2 = pool(r3, "avg")
    p2 = q(p2, "relu3")  # averaged in 8 bits, at its input's scale
    w4, b4 = fold(load("fc1.weight", (32, 16 * 3 * 3)), load("fc1.bias", (32,)), "bn3")
    h = q(relu(p2.reshape(N, -1) @ wq(w4).T + b4), "relu4")
    return h @ wq(load("fc2.weight", (10, 32))).T + load("fc2.bias", (10,))


def check_graph():
    import onnx
    from onnx import TensorProto, checker, numpy_helper

    m = onnx.load(os.path.join(d, "int8.onnx"))
    checker.check_model(m, full_check=True)
    g = m.graph
    ops = [n.op_type for n in g.node]
    inits = {t.name: t for t in m.graph.initializer}
    # bn1 stays: conv1 runs in fp32
    assert ops.count("BatchNormalization") == 1 and inits["conv1.weight"].data_type == TensorProto.FLOAT, ops
    # pairs after relu2, relu3, relu4 and the average pooling, and where conv2 and the residual
    # sum read pool0 (relu1's range); one DequantizeLinear per int8 weight (4); the logits stay float
    assert ops.count("QuantizeLinear") == 6 and ops.count("DequantizeLinear") == 10, ops
    assert g.node[-1].op_type == "Gemm", g.node[-1]
    add = [n for n in g.node if n.op_type == "Add"][0]
    assert "add/residual" in add.input and [n for n in g.node if n.op_type == "Conv"][1].input[0] == "conv2/input", add
    for n in m.graph.node:
        if n.op_type == "QuantizeLinear":
            zp = inits[n.input[2]]
            assert zp.data_type == TensorProto.UINT8, (n.name, zp.data_type)
            assert numpy_helper.to_array(zp) == 0
    for name, chans in (("conv2.weight", 8), ("conv3.weight", 16), ("fc1.weight", 32), ("fc2.weight", 10)):
        t = inits[name]
        assert t.data_type == TensorProto.INT8, (name, t.data_type)
        q = numpy_helper.to_array(t)
        assert q.shape[0] == chans and np.abs(q.reshape(chans, -1)).max(axis=1).min() == 127, (name, q.shape)
        dq = [n for n in m.graph.node if n.op_type == "DequantizeLinear" and n.input[0] == name]
        assert len(dq) == 1 and numpy_helper.to_array(inits[dq[0].input[1]]).shape == (chans,), name
        assert [a.i for a in dq[0].attribute if a.name == "axis"] == [0], dq[0]
    conv1 = [n for n in m.graph.node if n.op_type == "Conv"][0]
    assert conv1.input[:2] == ["data", "conv1.weight"], conv1.input
    print("graph: %d nodes, %d QuantizeLinear, %d DequantizeLinear, bn2 and bn3 folded"
          % (len(ops), ops.count("QuantizeLinear"), ops.count("DequantizeLinear")))


def main():
    rng = np.random.default_rng(7)
    images = rng.integers(0, 256, size=(N, SIDE, SIDE), dtype=np.uint8)
    idx = os.path.join(d, "images-idx3-ubyte")
    with open(idx, "wb") as f:
        f.write(bytes([0, 0, 8, 3]) + N.to_bytes(4, "big") + SIDE.to_bytes(4, "big") + SIDE.to_bytes(4, "big"))
        f.write(images.tobytes())
    x = ((images.astype(np.float32) / f32(255) - MEAN) / STD).astype(np.float32).reshape(N, 1, SIDE, SIDE)
    check_graph()
    out = subprocess.run(["node", os.path.join(src, "tests", "onnx_run.js"), ort, os.path.join(d, "int8.onnx"), idx,
                          str(N), str(MEAN), str(STD)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    probs = np.array([json.loads(l) for l in out.stdout.splitlines()], dtype=np.float64)
    logp = np.log(probs)  # the logits, up to a constant per row: the median difference
    align = lambda v: logp - np.median(logp - v, axis=1, keepdims=True)
    ref, ref32 = forward(x, True).astype(np.float64), forward(x, False).astype(np.float64)
    got, got32 = align(ref), align(ref32)
    # one value of relu4 rounded the other way moves a logit by about this
    flip = table["relu4"]["threshold"] / 255.0 * np.abs(load("fc2.weight", (10, 32))).max()
    diff, diff32 = np.abs(got - ref), np.abs(got32 - ref32)
    exact = float((diff < 1e-4).mean())
    print("onnxruntime vs numpy fake-quant: max |diff| %.3g (%.2f relu4 steps), %.1f%% of logits within 1e-4; "
          "vs numpy fp32: max |diff| %.3g" % (diff.max(), diff.max() / flip, 100 * exact, diff32.max()))
    # a value on a rounding boundary may round the other way (float sums in
    # another order) and move what follows it a little
    assert diff.max() < 4 * flip and exact > 0.85, (diff.max(), exact)
    # and the quantization is really there: fp32 is measurably off
    assert diff32.max() > 3 * diff.max() and (diff32 < 1e-4).mean() < 0.2, (diff32.max(), diff.max())
    assert (got.argmax(axis=1) == ref.argmax(axis=1)).mean() >= 0.95


main()
