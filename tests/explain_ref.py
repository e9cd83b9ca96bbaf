#!/usr/bin/env python3
"""explain_ref.py NETWORK.json WEIGHTS.safetensors SAMPLE.f32 SHAPE CLASS LAYER

The reference test-explain checks netloom's explanations against: the
network (Input, Conv2D, BatchNorm (running statistics), Activation relu,
MaxPool2D, GlobalAvgPool2D, Add, Flatten, Dense, wired as netloom's JSON
says) rebuilt in PyTorch with the
weights netloom exported, and the explanations computed with autograd,
written from their papers' definitions, not from netloom's code:

  saliency  |d y_c / d x| maxed over channels, divided by its maximum
            (Simonyan et al. 2014)
  gradcam   relu(sum_k a_k A^k), a_k = spatial mean of d y_c / d A^k,
            bilinearly resized to the input (align_corners=False), divided
            by its maximum (Selvaraju et al. 2017)

SAMPLE.f32 is one normalised sample (float32) of SHAPE ("1x28x28"). Prints
JSON {"logits", "saliency", "gradcam"} (maps flattened row by row).
"""
import json
import struct
import sys

import numpy as np
import torch
import torch.nn.functional as F


def load_safetensors(path):
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n])
    header.pop("__metadata__", None)
    out = {}
    for name, t in header.items():
        assert t["dtype"] == "F32", (name, t["dtype"])
        a, b = t["data_offsets"]
        out[name] = torch.from_numpy(
            np.frombuffer(blob[8 + n + a:8 + n + b], dtype="<f4").reshape(t["shape"]).copy())
    return out


def graph(net):
    """The nodes in a topological order, and each one's inputs by port."""
    inputs = {n["id"]: {} for n in net["nodes"]}
    for e in net["edges"]:
        a, b = [t.strip() for t in e.split("->")]
        a_id = a.split(":")[0]
        b_id, port = (b.split(":") + ["0"])[:2]
        inputs[b_id][int(port)] = a_id
    order, done = [], set()
    while len(order) < len(net["nodes"]):
        for n in net["nodes"]:
            if n["id"] not in done and all(v in done for v in inputs[n["id"]].values()):
                order.append(n)
                done.add(n["id"])
    return order, {k: [v[p] for p in sorted(v)] for k, v in inputs.items()}


def pair(v, default):
    if v is None:
        return (default, default)
    return tuple(v) if isinstance(v, list) else (v, v)


def apply(n, w, xs):
    p = n.get("params", {})
    op, i = n["op"], n["id"]
    x = xs[0] if xs else None
    if op == "Conv2D":
        return F.conv2d(x, w[i + ".weight"], w.get(i + ".bias"), stride=pair(p.get("stride"), 1),
                        padding=pair(p.get("padding"), 0))
    if op == "BatchNorm":
        return F.batch_norm(x, w[i + ".running_mean"], w[i + ".running_var"], w.get(i + ".gamma"),
                            w.get(i + ".beta"), training=False, eps=p.get("epsilon", 1e-5))
    if op == "Activation":
        assert p.get("act_type", "relu") == "relu"
        return F.relu(x)
    if op == "MaxPool2D":
        k = pair(p.get("pool_size"), 2)
        s = pair(p.get("strides"), 0)
        return F.max_pool2d(x, k, stride=k if s == (0, 0) else s, padding=pair(p.get("padding"), 0))
    if op == "GlobalAvgPool2D":
        return F.adaptive_avg_pool2d(x, 1)
    if op == "Add":
        return sum(xs[1:], xs[0])
    if op == "Flatten":
        return x.flatten(1)
    if op == "Dense":
        return F.linear(x.flatten(1), w[i + ".weight"], w.get(i + ".bias"))
    raise SystemExit("explain_ref.py: op %s not supported" % op)


def forward(net, w, x, layer, keep):
    order, inputs = graph(net)
    out = {}
    for n in order:
        i = n["id"]
        out[i] = x if n["op"] == "Input" else apply(n, w, [out[j] for j in inputs[i]])
        if i == layer:
            out[i].retain_grad()
            keep.append(out[i])
    used = {j for v in inputs.values() for j in v}
    return [out[n["id"]] for n in order if n["id"] not in used][0]


def main():
    net = json.load(open(sys.argv[1]))
    w = load_safetensors(sys.argv[2])
    shape = [int(d) for d in sys.argv[4].split("x")]
    cls, layer = int(sys.argv[5]), sys.argv[6]
    raw = np.fromfile(sys.argv[3], dtype="<f4")
    x = torch.from_numpy(raw.reshape([1] + shape).copy()).double().requires_grad_(True)
    w = {k: v.double() for k, v in w.items()}
    keep = []
    y = forward(net, w, x, layer, keep)
    y[0, cls].backward()
    sal = x.grad.abs().amax(dim=1)[0]
    sal = sal / sal.max()
    a, g = keep[0], keep[0].grad
    cam = F.relu((g.mean(dim=(2, 3), keepdim=True) * a).sum(dim=1, keepdim=True))
    cam = F.interpolate(cam, size=tuple(shape[1:]), mode="bilinear", align_corners=False)[0, 0]
    if cam.max() > 0:
        cam = cam / cam.max()
    print(json.dumps({"logits": y[0].tolist(), "saliency": sal.flatten().tolist(),
                      "gradcam": cam.detach().flatten().tolist()}))


if __name__ == "__main__":
    main()
