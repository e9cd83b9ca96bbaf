#!/usr/bin/env python3
"""torch_onnx_models.py OUT_DIR IDX_IMAGES N — a LeNet, a small ResNet
with BatchNorm (eval mode, running statistics made non-trivial), an MLP
with LayerNorm and GELU, and the same with GELU's tanh approximation at
opset 13 (LayerNorm and GELU both written as their formulas), exported
by torch.onnx.export with a dynamic batch; for each, the probabilities
PyTorch gives on the first N images of an MNIST-format IDX file (pixels
/ 255, no further normalisation, as an import without netloom metadata
feeds them): OUT_DIR/{lenet,resnet,mlp-gelu,mlp-gelu-tanh}.onnx and .json (one array per line)."""
import os
import struct
import sys

import torch
from torch import nn


class LeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2))
        self.classifier = nn.Sequential(
            nn.Flatten(), nn.Linear(16 * 5 * 5, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(),
            nn.Dropout(0.5), nn.Linear(84, 10))

    def forward(self, x):
        return self.classifier(self.features(x))


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(self.bn2(self.conv2(y)) + x)


class SmallResNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU())
        self.block1 = Block(8)
        self.down = nn.Sequential(nn.Conv2d(8, 16, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(16),
                                  nn.LeakyReLU(0.1))
        self.block2 = Block(16)
        self.head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 10))

    def forward(self, x):
        return self.head(self.block2(self.down(self.block1(self.stem(x)))))


class MlpGelu(nn.Module):
    """LayerNorm and GELU, exported at opset 17 (LayerNormalization; GELU
    as PyTorch writes it: x * 0.5 * (1 + erf(x / sqrt(2))))"""
    def __init__(self, approximate="none"):
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(784, 64), nn.LayerNorm(64), nn.GELU(approximate=approximate),
                                 nn.Dropout(0.1), nn.Linear(64, 10))

    def forward(self, x):
        return self.net(x)


def images(path, n):
    data = open(path, "rb").read()
    count, h, w = struct.unpack(">III", data[4:16])
    n = min(n, count)
    x = torch.tensor(list(data[16:16 + n * h * w]), dtype=torch.float32) / 255
    return x.reshape(n, 1, h, w)


def main():
    out, idx, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    torch.manual_seed(3)
    x = images(idx, n)
    for name, model, opset in (("lenet", LeNet(), 13), ("resnet", SmallResNet(), 13), ("mlp-gelu", MlpGelu(), 17),
                                ("mlp-gelu-tanh", MlpGelu("tanh"), 13)):
        for m in model.modules():
            if isinstance(m, nn.LayerNorm):
                m.weight.data.uniform_(0.5, 1.5)
                m.bias.data.uniform_(-0.2, 0.2)
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.uniform_(-0.2, 0.2)
                m.running_var.uniform_(0.5, 1.5)
                m.weight.data.uniform_(0.5, 1.5)
                m.bias.data.uniform_(-0.2, 0.2)
        model.eval()
        path = os.path.join(out, name + ".onnx")
        torch.onnx.export(model, x[:1], path, input_names=["image"], output_names=["logits"], opset_version=opset,
                          dynamic_axes={"image": {0: "N"}, "logits": {0: "N"}})
        with torch.no_grad():
            probs = torch.softmax(model(x), dim=1)
        with open(os.path.join(out, name + ".json"), "w") as f:
            for row in probs.tolist():
                f.write("[%s]\n" % ", ".join(repr(v) for v in row))


if __name__ == "__main__":
    main()
