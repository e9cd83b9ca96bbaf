#!/usr/bin/env python3
"""explain_ref.py NETWORK.json WEIGHTS.safetensors SAMPLE.f32 CLASS LAYER

The reference test-explain checks netloom's explanations against: the
network (a chain of Input, Conv2D, Activation relu, MaxPool2D, Flatten,
Dense, as netloom's JSON describes it) rebuilt in PyTorch with the
weights netloom exported, and the explanations computed with autograd,
written from their papers' definitions, not from netloom's code:

  saliency  |d y_c / d x| maxed over channels, divided by its maximum
            (Simonyan et al. 2014)
  gradcam   relu(sum_k a_k A^k), a_k = spatial mean of d y_c / d A^k,
            bilinearly resized to the input (align_corners=False), divided
            by its maximum (Selvaraju et al. 2017)

SAMPLE.f32 is one normalised sample (float32, the Input's shape). Prints
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


def chain(net):
    """The nodes in order along the edges, from the Input."""
    nxt = {}
    for e in net["edges"]:
        a, b = [s.strip().split(":")[0] for s in e.split("->")]
        nxt[a] = b
    nodes = {n["id"]: n for n in net["nodes"]}
    cur = [n["id"] for n in net["nodes"] if n["op"] == "Input"][0]
    order = [nodes[cur]]
    while cur in nxt:
        cur = nxt[cur]
        order.append(nodes[cur])
    return order


def pair(v, default):
    if v is None:
        return (default, default)
    return tuple(v) if isinstance(v, list) else (v, v)


def forward(order, w, x, layer, keep):
    for n in order:
        p = n.get("params", {})
        op, i = n["op"], n["id"]
        if op == "Input":
            pass
        elif op == "Conv2D":
            x = F.conv2d(x, w[i + ".weight"], w.get(i + ".bias"), stride=pair(p.get("stride"), 1),
                         padding=pair(p.get("padding"), 0))
        elif op == "Activation":
            assert p.get("act_type", "relu") == "relu"
            x = F.relu(x)
        elif op == "MaxPool2D":
            k = pair(p.get("pool_size"), 2)
            s = pair(p.get("strides"), 0)
            x = F.max_pool2d(x, k, stride=k if s == (0, 0) else s, padding=pair(p.get("padding"), 0))
        elif op == "Flatten":
            x = x.flatten(1)
        elif op == "Dense":
            x = F.linear(x.flatten(1), w[i + ".weight"], w.get(i + ".bias"))
        else:
            raise SystemExit("explain_ref.py: op %s not supported" % op)
        if i == layer:
            x.retain_grad()
            keep.append(x)
    return x


def main():
    net = json.load(open(sys.argv[1]))
    w = load_safetensors(sys.argv[2])
    cls, layer = int(sys.argv[4]), sys.argv[5]
    order = chain(net)
    raw = np.fromfile(sys.argv[3], dtype="<f4")
    side = int(round((raw.size) ** 0.5))
    x = torch.from_numpy(raw.reshape(1, 1, side, side).copy()).double().requires_grad_(True)
    w = {k: v.double() for k, v in w.items()}
    keep = []
    y = forward(order, w, x, layer, keep)
    y[0, cls].backward()
    sal = x.grad.abs().amax(dim=1)[0]
    sal = sal / sal.max()
    a, g = keep[0], keep[0].grad
    cam = F.relu((g.mean(dim=(2, 3), keepdim=True) * a).sum(dim=1, keepdim=True))
    cam = F.interpolate(cam, size=(side, side), mode="bilinear", align_corners=False)[0, 0]
    if cam.max() > 0:
        cam = cam / cam.max()
    print(json.dumps({"logits": y[0].tolist(), "saliency": sal.flatten().tolist(),
                      "gradcam": cam.detach().flatten().tolist()}))


if __name__ == "__main__":
    main()
