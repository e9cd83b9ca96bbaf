#!/usr/bin/python3
"""PyTorch eager reference for bench-resnet20: the same ResNet-20
(bench/resnet20.json: 3x3 stem of 16, three stages of three basic blocks
with 16/32/64 channels, projection shortcuts (1x1 conv + BN) where the shape
changes, global average pool, Dense 10), trained the same way on generated
data: SGD momentum 0.9, wd 5e-4, lr 0.1, the loss read back every step.

  torch_resnet20.py [--device cuda] [--batch 128] [--precision fp32|bf16|fp16]
                    [--steps 50] [--warmup 10] [--repeats 5]

bf16/fp16 use torch.autocast (fp32 master weights; fp16 with a GradScaler),
which is what netloom's --precision does. TF32 is off, as in netloom.
Prints one JSON line like bench-resnet20."""
import argparse, json, statistics, time

import torch
import torch.nn as nn
import torch.nn.functional as F

p = argparse.ArgumentParser()
p.add_argument("--device", default="cuda")
p.add_argument("--batch", type=int, default=128)
p.add_argument("--precision", default="fp32", choices=["fp32", "bf16", "fp16"])
p.add_argument("--steps", type=int, default=50)
p.add_argument("--warmup", type=int, default=10)
p.add_argument("--repeats", type=int, default=5)
p.add_argument("--threads", type=int, default=0)
a = p.parse_args()
if a.threads:
    torch.set_num_threads(a.threads)
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
torch.backends.cudnn.benchmark = True
torch.manual_seed(0)


class Block(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.short = None
        if stride != 1 or cin != cout:
            self.short = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return F.relu(y + (self.short(x) if self.short is not None else x))


class ResNet20(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 1, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU())
        layers, cin = [], 16
        for s, c in enumerate([16, 32, 64]):
            for b in range(3):
                layers.append(Block(cin, c, 2 if (s > 0 and b == 0) else 1))
                cin = c
        self.layers = nn.Sequential(*layers)
        self.fc = nn.Linear(64, 10)

    def forward(self, x):
        x = self.layers(self.stem(x))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


dev = torch.device(a.device)
model = ResNet20().to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)
dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(a.precision)
scaler = torch.amp.GradScaler("cuda", enabled=a.precision == "fp16" and dev.type == "cuda")
g = torch.Generator().manual_seed(7)
x = (torch.rand(a.batch, 3, 32, 32, generator=g) * 4 - 2).to(dev)
y = torch.randint(0, 10, (a.batch,), generator=g).to(dev)


def step():
    opt.zero_grad(set_to_none=True)
    with torch.autocast(dev.type, dtype=dtype, enabled=dtype is not None):
        loss = F.cross_entropy(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    return loss.item()


def sync():
    if dev.type == "cuda":
        torch.cuda.synchronize()


for _ in range(a.warmup):
    step()
sync()
ips = []
for _ in range(a.repeats):
    t0 = time.perf_counter()
    for _ in range(a.steps):
        last = step()
    sync()
    ips.append(a.steps * a.batch / (time.perf_counter() - t0))
print(json.dumps({"impl": "pytorch", "network": "resnet20", "device": a.device, "batch": a.batch,
                  "precision": a.precision, "steps": a.steps, "images_per_s": round(statistics.median(ips), 1),
                  "repeats": [round(v, 1) for v in ips], "last_loss": round(last, 4),
                  "torch": torch.__version__}))
