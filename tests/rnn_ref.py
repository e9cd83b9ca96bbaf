#!/usr/bin/env python3
"""rnn_ref.py CASE.safetensors... — the independent reference of test-rnn:
each file holds an LSTM or GRU case written by netloom's CPU kernels (its
parameters as metadata; data, optional state and lengths, the five weight
slots in PyTorch's layout, R, and netloom's out and gradients d_*). Here
PyTorch 1.13's nn.LSTM / nn.GRU (batch_first) gets the same weights, padded
batches go through pack_padded_sequence, L = sum(out * R) is
differentiated, and every output and gradient is compared within 1e-5
(relative above 1). The classic GRU, which PyTorch lacks, is written out
step by step per sample. Prints each comparison; exit status 1 on a
mismatch."""
import json
import struct
import sys

import numpy as np
import torch
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence


def read_safetensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    meta = header.pop("__metadata__", {})
    out = {}
    for name, t in header.items():
        a, b = t["data_offsets"]
        out[name] = np.frombuffer(raw[8 + n + a:8 + n + b], dtype="<f4").reshape(t["shape"]).copy()
    return meta, out


def slot_views(p, w, gates, H, L, D, C):
    """Per (layer, direction) name: the PyTorch parameter's slice."""
    gh = gates * H
    views = {}
    for l in range(L):
        for d in range(D):
            sfx = f"_l{l}" + ("_reverse" if d else "")
            k = l * D + d
            if l == 0:
                views["weight_ih" + sfx] = ("l0_i2h_weight", slice(d * gh, (d + 1) * gh))
            else:
                j = (l - 1) * D + d
                views["weight_ih" + sfx] = ("i2h_weight", slice(j * gh, (j + 1) * gh))
            views["weight_hh" + sfx] = ("h2h_weight", slice(k * gh, (k + 1) * gh))
            views["bias_ih" + sfx] = ("i2h_bias", slice(k * gh, (k + 1) * gh))
            views["bias_hh" + sfx] = ("h2h_bias", slice(k * gh, (k + 1) * gh))
    return views


def classic_gru(x, lengths, params, H, D):
    """One layer of the classic GRU, n = tanh(W_in x + b_in + W_hn (r * h) + b_hn), sample by sample."""
    B, T, _ = x.shape
    outs = []
    for b in range(B):
        n = int(lengths[b])
        dirs = []
        for d in range(D):
            sfx = "_l0" + ("_reverse" if d else "")
            wih, whh = params["weight_ih" + sfx], params["weight_hh" + sfx]
            bih, bhh = params["bias_ih" + sfx], params["bias_hh" + sfx]
            h = torch.zeros(H)
            steps = [None] * n
            order = range(n - 1, -1, -1) if d else range(n)
            for t in order:
                gi = wih @ x[b, t] + bih
                r = torch.sigmoid(gi[:H] + whh[:H] @ h + bhh[:H])
                z = torch.sigmoid(gi[H:2 * H] + whh[H:2 * H] @ h + bhh[H:2 * H])
                c = torch.tanh(gi[2 * H:] + whh[2 * H:] @ (r * h) + bhh[2 * H:])
                h = (1 - z) * c + z * h
                steps[t] = h
            seq = torch.stack(steps) if n else torch.zeros(0, H)
            dirs.append(torch.cat([seq, torch.zeros(T - n, H)]))
        outs.append(torch.cat(dirs, dim=1))
    return torch.stack(outs)


def run_case(path):
    meta, t = read_safetensors(path)
    op = meta["op"]
    H = int(meta["units"])
    L = int(meta.get("layers", "1"))
    D = 2 if meta.get("bidirectional", "false") == "true" else 1
    last = meta.get("output", "all") == "last"
    msum = meta.get("merge", "concat") == "sum"
    classic = meta.get("variant", "linear_before_reset") == "classic"
    gates = 4 if op == "LSTM" else 3
    B, T, C = t["data"].shape
    lengths = t["lengths"].astype(np.int64) if "lengths" in t else np.full(B, T, dtype=np.int64)

    torch.manual_seed(0)
    x = torch.tensor(t["data"], requires_grad=True)
    slots = {k: torch.tensor(t[k], requires_grad=True)
             for k in ("l0_i2h_weight", "i2h_weight", "h2h_weight", "i2h_bias", "h2h_bias") if k in t}
    views = slot_views(None, slots, gates, H, L, D, C)
    params = {name: slots[s][sl] for name, (s, sl) in views.items()}
    state = torch.tensor(t["state"], requires_grad=True) if "state" in t else None

    if classic:
        assert L == 1 and state is None and not last
        y = classic_gru(x, lengths, params, H, D)
    else:
        mod = (torch.nn.LSTM if op == "LSTM" else torch.nn.GRU)(C, H, num_layers=L, bidirectional=D == 2,
                                                               batch_first=True)
        # the module's parameters replaced by the slot slices, so gradients reach the slots
        for name in list(mod._parameters):
            del mod._parameters[name]
            setattr(mod, name, params[name])
        mod._flat_weights = [params[n] for n in mod._flat_weights_names]
        hx = None
        if state is not None:
            st = state.transpose(0, 1)
            hx = (st[:L * D].contiguous(), st[L * D:].contiguous()) if op == "LSTM" else st.contiguous()
        packed = pack_padded_sequence(x, torch.tensor(lengths), batch_first=True, enforce_sorted=False)
        out, hn = mod(packed, hx)
        y, _ = pad_packed_sequence(out, batch_first=True, total_length=T)
        if last:
            h_n = hn[0] if op == "LSTM" else hn
            y = torch.cat([h_n[(L - 1) * D + d] for d in range(D)], dim=1)
    if msum and D == 2:
        y = y[..., :H] + y[..., H:]
    (y * torch.tensor(t["R"])).sum().backward()

    checks = [("out", y.detach().numpy(), t["out"]), ("d_data", x.grad.numpy(), t["d_data"])]
    if state is not None:
        checks.append(("d_state", state.grad.numpy(), t["d_state"]))
    for k, v in slots.items():
        checks.append(("d_" + k, v.grad.numpy(), t["d_" + k]))
    bad = 0
    for name, ref, got in checks:
        err = np.abs(ref - got) / np.maximum(1.0, np.abs(ref))
        worst = float(err.max()) if err.size else 0.0
        ok = ref.shape == got.shape and worst <= 1e-5
        print(f"{path.split('/')[-1]}: {name} {ref.shape} worst {worst:.2e} {'ok' if ok else 'MISMATCH'}")
        bad += not ok
    return bad


def main():
    torch.set_num_threads(1)
    bad = sum(run_case(p) for p in sys.argv[1:])
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
