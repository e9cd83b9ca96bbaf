#!/usr/bin/env python3
"""torch_onnx_acts.py OUT_DIR — test-onnx-acts's models: every torch.nn
activation with an ONNX form, and every form PyTorch 1.13's exporter
writes for 2-D pooling (and a PReLU over images), each exported by torch.onnx.export, with an input
batch and PyTorch's output on it.

An activation model is Linear(12, 16) (weights scaled so that the
activation sees about -8 .. 8, across every kink), the activation,
Linear(16, 5); a pooling model is the pool alone on (4, 3, 10, 10). For
each NAME: OUT_DIR/NAME.onnx, NAME.in and NAME.out (raw float32), and a
line in OUT_DIR/models.txt: "NAME ok DIM..." (the input's shape) or
"NAME refused WORD" for the forms netloom refuses, WORD a text the
refusal must hold."""
import os
import sys

import torch
from torch import nn

N = 4


def mlp(act):
    torch.manual_seed(7)
    m = nn.Sequential(nn.Linear(12, 16), act, nn.Linear(16, 5))
    with torch.no_grad():
        m[0].weight.mul_(12.0)
        m[0].bias.uniform_(-3, 3)
    return m


class Clamp(nn.Module):
    def __init__(self, lo, hi):
        super().__init__()
        self.lo, self.hi = lo, hi

    def forward(self, x):
        return torch.clamp(x, self.lo, self.hi)


# name, module, opset, refusal text (None: must import)
ACTS = [
    ("relu", nn.ReLU(), 13, None),
    ("sigmoid", nn.Sigmoid(), 13, None),
    ("tanh", nn.Tanh(), 13, None),
    ("gelu", nn.GELU(), 13, None),
    ("elu", nn.ELU(), 13, None),
    ("celu", nn.CELU(), 13, None),
    ("selu", nn.SELU(), 13, None),
    ("softplus", nn.Softplus(), 13, None),
    ("softplus-beta2", nn.Softplus(beta=2.0), 13, None),
    ("softsign", nn.Softsign(), 13, None),
    ("hardsigmoid", nn.Hardsigmoid(), 13, None),
    ("hardswish-13", nn.Hardswish(), 13, None),
    ("hardswish-17", nn.Hardswish(), 17, None),
    ("silu", nn.SiLU(), 13, None),
    ("silu-17", nn.SiLU(), 17, None),
    ("mish", nn.Mish(), 13, None),
    ("mish-17", nn.Mish(), 17, None),
    ("hardtanh", nn.Hardtanh(), 13, None),
    ("relu6", nn.ReLU6(), 13, None),
    ("relu6-9", nn.ReLU6(), 9, None),
    ("leakyrelu", nn.LeakyReLU(0.2), 13, None),
    ("prelu", nn.PReLU(), 13, None),
    ("logsigmoid", nn.LogSigmoid(), 13, None),
    ("tanhshrink", nn.Tanhshrink(), 13, None),
    ("elu-alpha", nn.ELU(0.5), 13, "alpha 0.5"),
    ("hardtanh-2-3", nn.Hardtanh(-2.0, 3.0), 13, None),
    ("clamp-min", Clamp(-0.5, None), 13, None),
    ("prelu-channels", nn.PReLU(16), 13, None),
    ("softshrink", nn.Softshrink(), 13, None),
    ("softshrink-1", nn.Softshrink(1.0), 13, None),
    ("hardshrink", nn.Hardshrink(), 13, None),
    ("hardshrink-17", nn.Hardshrink(2.0), 17, None),
]

POOLS = [
    ("avg-pad", nn.AvgPool2d(3, 2, padding=1)),
    ("avg-pad-nocount", nn.AvgPool2d(3, 2, padding=1, count_include_pad=False)),
    ("avg-ceil", nn.AvgPool2d(3, 2, ceil_mode=True)),
    ("avg-ceil-pad", nn.AvgPool2d(3, 2, padding=1, ceil_mode=True)),
    ("avg-ceil-pad-nocount", nn.AvgPool2d(3, 2, padding=1, ceil_mode=True, count_include_pad=False)),
    ("avg-2x2", nn.AvgPool2d(2)),
    ("max-pad", nn.MaxPool2d(3, 2, padding=1)),
    ("max-ceil", nn.MaxPool2d(3, 2, ceil_mode=True)),
    ("max-ceil-pad", nn.MaxPool2d(3, 2, padding=1, ceil_mode=True)),
    ("adaptive-avg-1", nn.AdaptiveAvgPool2d(1)),
    ("adaptive-avg-2", nn.AdaptiveAvgPool2d(2)),
    ("adaptive-max-1", nn.AdaptiveMaxPool2d(1)),
    ("prelu-4d", nn.PReLU(3)),
]


def export(out, name, model, x, opset, lines, refusal):
    model.eval()
    torch.onnx.export(model, x, os.path.join(out, name + ".onnx"), input_names=["x"], output_names=["y"],
                      opset_version=opset, dynamic_axes={"x": {0: "N"}, "y": {0: "N"}})
    with torch.no_grad():
        y = model(x)
    x.numpy().astype("<f4").tofile(os.path.join(out, name + ".in"))
    y.numpy().astype("<f4").tofile(os.path.join(out, name + ".out"))
    if refusal:
        lines.append("%s refused %s" % (name, refusal))
    else:
        lines.append("%s ok %s" % (name, " ".join(str(d) for d in x.shape)))


def main():
    out = sys.argv[1]
    lines = []
    torch.manual_seed(1)
    x = torch.rand(N, 12) * 2 - 1
    for name, act, opset, refusal in ACTS:
        if isinstance(act, nn.PReLU):
            with torch.no_grad():
                act.weight.copy_(torch.linspace(0.1, 0.4, act.weight.numel()) if act.weight.numel() > 1
                                 else torch.tensor([0.3]))
        export(out, name, mlp(act), x, opset, lines, refusal)
    x = torch.rand(N, 3, 10, 10) * 2 - 1
    for name, pool in POOLS:
        if isinstance(pool, nn.PReLU):
            with torch.no_grad():
                pool.weight.copy_(torch.tensor([0.2, -0.5, 1.5]))
        export(out, name, pool, x, 13, lines, None)
    with open(os.path.join(out, "models.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
