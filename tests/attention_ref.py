#!/usr/bin/env python3
"""attention_ref.py IN OUT - PyTorch's nn.MultiheadAttention and numpy's
sinusoids as the reference for test-attention-ref.

IN (safetensors, written by the C test) holds, per case prefix P ("self.",
"cross.", "crossmasked."): P+"query", P+"memory" (cross only), the netloom weights
P+"q_weight" ... P+"out_bias", P+"out_grad" and P+"lengths"; its metadata
gives P+"heads" and P+"causal". OUT gets P+"out" and the gradient of every
input and weight as P+"d"+name, computed in float64 by
torch.nn.MultiheadAttention(batch_first=True) with key_padding_mask (keys
past each length) and a causal attn_mask, plus "pos" = the Transformer's
sinusoidal table for metadata "pos_steps" x "pos_channels".
The safetensors format is read and written here with the standard library
and numpy only (no netloom code).
"""
import json
import struct
import sys

import numpy as np
import torch


def read_st(path):
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n])
    meta = header.pop("__metadata__", {})
    data = blob[8 + n:]
    out = {}
    for name, t in header.items():
        assert t["dtype"] == "F32", name
        a, b = t["data_offsets"]
        out[name] = np.frombuffer(data[a:b], dtype="<f4").reshape(t["shape"]).astype(np.float64)
    return out, meta


def write_st(path, tensors):
    header, chunks, off = {}, [], 0
    for name, arr in tensors.items():
        raw = np.ascontiguousarray(arr, dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(arr.shape), "data_offsets": [off, off + len(raw)]}
        chunks.append(raw)
        off += len(raw)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(chunks))


def attention_case(t, meta, p, out):
    heads = int(meta[p + "heads"])
    causal = meta[p + "causal"] == "1"
    cross = (p + "memory") in t
    q = torch.tensor(t[p + "query"], requires_grad=True)
    m = torch.tensor(t[p + "memory"], requires_grad=True) if cross else q
    B, T, C = q.shape
    S, Cm = m.shape[1], m.shape[2]
    mha = torch.nn.MultiheadAttention(C, heads, bias=True, batch_first=True, kdim=Cm, vdim=Cm).double()
    w = {k: torch.tensor(t[p + k]) for k in ("q_weight", "k_weight", "v_weight", "out_weight",
                                             "q_bias", "k_bias", "v_bias", "out_bias")}
    with torch.no_grad():
        if mha._qkv_same_embed_dim:
            mha.in_proj_weight.copy_(torch.cat([w["q_weight"], w["k_weight"], w["v_weight"]]))
        else:
            mha.q_proj_weight.copy_(w["q_weight"])
            mha.k_proj_weight.copy_(w["k_weight"])
            mha.v_proj_weight.copy_(w["v_weight"])
        mha.in_proj_bias.copy_(torch.cat([w["q_bias"], w["k_bias"], w["v_bias"]]))
        mha.out_proj.weight.copy_(w["out_weight"])
        mha.out_proj.bias.copy_(w["out_bias"])
    lengths = t[p + "lengths"].astype(np.int64)
    # netloom masks the memory by the lengths only when it is as long as the query
    key_pad = torch.tensor(np.arange(S)[None, :] >= lengths[:, None]) if S == T else None
    attn_mask = torch.triu(torch.ones(T, S, dtype=torch.bool), diagonal=1) if causal else None
    y, _ = mha(q, m, m, key_padding_mask=key_pad, attn_mask=attn_mask, need_weights=False)
    # netloom writes 0 at padded query steps: their output and gradient are constants
    valid = torch.tensor(np.arange(T)[None, :, None] < lengths[:, None, None], dtype=torch.float64)
    y = y * valid
    y.backward(torch.tensor(t[p + "out_grad"]))
    out[p + "out"] = y.detach().numpy()
    out[p + "dquery"] = q.grad.numpy()
    if cross:
        out[p + "dmemory"] = m.grad.numpy()
    if mha._qkv_same_embed_dim:
        g = mha.in_proj_weight.grad.numpy()
        out[p + "dq_weight"], out[p + "dk_weight"], out[p + "dv_weight"] = g[:C], g[C:2 * C], g[2 * C:]
    else:
        out[p + "dq_weight"] = mha.q_proj_weight.grad.numpy()
        out[p + "dk_weight"] = mha.k_proj_weight.grad.numpy()
        out[p + "dv_weight"] = mha.v_proj_weight.grad.numpy()
    gb = mha.in_proj_bias.grad.numpy()
    out[p + "dq_bias"], out[p + "dk_bias"], out[p + "dv_bias"] = gb[:C], gb[C:2 * C], gb[2 * C:]
    out[p + "dout_weight"] = mha.out_proj.weight.grad.numpy()
    out[p + "dout_bias"] = mha.out_proj.bias.grad.numpy()


def sinusoids(steps, channels):
    pos = np.arange(steps, dtype=np.float64)[:, None]
    i = np.arange(channels)[None, :]
    angle = pos / np.power(10000.0, (i - i % 2) / channels)
    return np.where(i % 2 == 0, np.sin(angle), np.cos(angle))


def main():
    t, meta = read_st(sys.argv[1])
    out = {}
    for p in ("self.", "cross.", "crossmasked."):
        attention_case(t, meta, p, out)
    out["pos"] = sinusoids(int(meta["pos_steps"]), int(meta["pos_channels"]))
    write_st(sys.argv[2], out)


if __name__ == "__main__":
    main()
