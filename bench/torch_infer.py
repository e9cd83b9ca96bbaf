#!/usr/bin/python3
"""PyTorch inference reference: eval mode, no_grad, fp32 and INT8.

  bench/torch_infer.py --network lenet|resnet-small [--batch 128]
                       [--threads 2] [--int8] [--iters 50] [--repeats 5]

Prints one JSON line: median images/s and batch latency in ms.
"""
import argparse, json, statistics, time
import torch
nn = torch.nn
p = argparse.ArgumentParser()
p.add_argument("--network", default="lenet")
p.add_argument("--batch", type=int, default=128)
p.add_argument("--threads", type=int, default=2)
p.add_argument("--iters", type=int, default=50)
p.add_argument("--warmup", type=int, default=5)
p.add_argument("--repeats", type=int, default=5)
p.add_argument("--int8", action="store_true", help="post-training static quantization (torch.ao, onednn engine)")
p.add_argument("--calibration", type=int, default=512, help="calibration samples (INT8)")
p.add_argument("--engine", default="onednn", help="quantized engine (INT8): onednn, fbgemm, qnnpack, x86")
a = p.parse_args()
torch.set_num_threads(a.threads)


def lenet():
    return nn.Sequential(nn.Conv2d(1, 20, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(20, 50, 5), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Flatten(), nn.Linear(800, 500), nn.ReLU(), nn.Linear(500, 10))


class Block(nn.Module):
    def __init__(s, cin, cout, stride):
        super().__init__()
        s.c1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False); s.b1 = nn.BatchNorm2d(cout); s.r1 = nn.ReLU()
        s.c2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False); s.b2 = nn.BatchNorm2d(cout)
        s.short = None
        if stride != 1 or cin != cout:
            s.short = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))
        s.r = nn.ReLU()

    def forward(s, x):
        y = s.b2(s.c2(s.r1(s.b1(s.c1(x)))))
        return s.r(y + (s.short(x) if s.short is not None else x))


def resnet_small():
    return nn.Sequential(nn.Conv2d(1, 16, 3, 1, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU(),
                         Block(16, 16, 1), Block(16, 32, 2), Block(32, 64, 2),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10))


net = {"lenet": lenet, "resnet-small": resnet_small}[a.network]().eval()
x = torch.rand(a.batch, 1, 28, 28) * 3 - 1
if a.int8:
    # FX graph mode: it fuses Conv+BN+ReLU and Linear+ReLU and places the
    # quant/dequant stubs itself, as a user of torch.ao would.
    from torch.ao.quantization import get_default_qconfig_mapping
    from torch.ao.quantization.quantize_fx import prepare_fx, convert_fx
    torch.backends.quantized.engine = a.engine
    qmap = get_default_qconfig_mapping(a.engine)
    prepared = prepare_fx(net, qmap, example_inputs=(x[:1],))
    with torch.no_grad():
        calib = torch.rand(a.calibration, 1, 28, 28) * 3 - 1
        for i in range(0, a.calibration, 128):
            prepared(calib[i:i + 128])
    net = convert_fx(prepared)
with torch.no_grad():
    for _ in range(a.warmup):
        net(x)
    ips = []
    for _ in range(a.repeats):
        t0 = time.perf_counter()
        for _ in range(a.iters):
            net(x)
        ips.append(a.iters * a.batch / (time.perf_counter() - t0))
m = statistics.median(ips)
print(json.dumps({"impl": "pytorch", "engine": ("int8-" + a.engine) if a.int8 else "fp32", "network": a.network, "batch": a.batch,
                  "threads": a.threads, "images_per_s": round(m, 1), "latency_ms": round(1000 * a.batch / m, 4)}))
