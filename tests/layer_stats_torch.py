#!/usr/bin/env python3
"""layer_stats_torch.py WEIGHTS BATCH STATS — the independent reference of
test-layer-stats: netloom's initial weights (safetensors, read here with
numpy alone) in the same network in PyTorch (conv1 3x3 with 4 channels,
ReLU, fc1 16 units, ReLU, fc2 3 units, mean softmax cross-entropy), one
plain SGD step on the same batch, and the statistics netloom wrote (JSON)
compared: per weight tensor its weight norm, gradient norm and update
ratio within 1e-5 relative; per node output its mean, standard deviation
and share of zeros. Prints each comparison; exit status 1 on a mismatch."""
import json
import struct
import sys

import numpy as np
import torch


def read_safetensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        assert t["dtype"] == "F32", name
        a, b = t["data_offsets"]
        out[name] = np.frombuffer(raw[8 + n + a:8 + n + b], dtype="<f4").reshape(t["shape"]).copy()
    return out


def main():
    w = read_safetensors(sys.argv[1])
    batch = read_safetensors(sys.argv[2])
    with open(sys.argv[3]) as f:
        got = json.load(f)
    lr = got["lr"]
    torch.set_default_dtype(torch.float32)
    params = {k: torch.tensor(v, requires_grad=True) for k, v in w.items()}
    x = torch.tensor(batch["input"])
    y = torch.tensor(batch["label"]).long()
    acts = {}
    h = torch.nn.functional.conv2d(x, params["conv1.weight"], params["conv1.bias"])
    acts["conv1"] = h
    h = torch.relu(h)
    acts["relu1"] = h
    h = h.flatten(1)
    h = h @ params["fc1.weight"].T + params["fc1.bias"]
    acts["fc1"] = h
    h = torch.relu(h)
    acts["relu2"] = h
    h = h @ params["fc2.weight"].T + params["fc2.bias"]
    acts["fc2"] = h
    loss = torch.nn.functional.cross_entropy(h, y)
    loss.backward()
    bad = 0
    for name, p in params.items():
        before = p.detach().double()
        grad = p.grad.double()
        # the update in float32, as netloom stores weights
        after = (p.detach() - lr * p.grad).double()
        wn = before.norm().item()
        ref = {"weight_norm": wn, "grad_norm": grad.norm().item(),
               "update_ratio": ((after - before).norm() / wn).item() if wn > 0 else None}
        for k, r in ref.items():
            g = got["tensors"][name][k]
            if r is None or g is None:
                # no ratio of a zero weight (biases start at zero): both say so
                ok = r is None and g is None
                bad += not ok
                print(f"{name} {k}: netloom {g} torch {r} {'ok' if ok else 'MISMATCH'}")
                continue
            rel = abs(g - r) / max(abs(r), 1e-30)
            ok = rel <= 1e-5
            bad += not ok
            print(f"{name} {k}: netloom {g:.9g} torch {r:.9g} rel {rel:.2e} {'ok' if ok else 'MISMATCH'}")
    for node, a in acts.items():
        a = a.detach().double()
        ref = {"act_mean": a.mean().item(), "act_std": a.std(unbiased=False).item(),
               "dead_fraction": (a == 0).double().mean().item()}
        for k, r in ref.items():
            g = got["nodes"][node][k]
            err = abs(g - r)
            ok = err <= 1e-5 + 1e-5 * abs(r)
            bad += not ok
            print(f"{node} {k}: netloom {g:.9g} torch {r:.9g} err {err:.2e} {'ok' if ok else 'MISMATCH'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
