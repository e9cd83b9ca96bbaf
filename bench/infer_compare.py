#!/usr/bin/python3
"""Inference speed, netloom against PyTorch 1.13, in one run on this machine.

For lenet and resnet-small at batch 128 and batch 1: netloom's training
program's forward (the path evaluate used before the inference executor),
netloom fp32 and INT8 (bench/bench-infer), PyTorch fp32 (eval, no_grad,
1 and 2 threads, its best) and PyTorch INT8 (torch.ao FX post-training
static quantization on the onednn engine, Conv+BN+ReLU fused, calibrated on
512 samples). The programs alternate within each round, so drift hits all;
the summary gives medians over rounds and the ratios the issue asks for.

With --accuracy, each network is also trained on Fashion-MNIST in a
temporary project (--epochs) and quantized with `netloom-cli quantize
--json`: fp32 and INT8 test accuracy side by side.

  bench/infer_compare.py [--build build] [--rounds 3] [--networks lenet,resnet-small]
                         [--batches 128,1] [--accuracy] [--epochs 2]
(--rounds 0 --accuracy: the accuracy part alone)
"""
import argparse, json, os, statistics, subprocess, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
p = argparse.ArgumentParser()
p.add_argument("--build", default=os.path.join(ROOT, "build"))
p.add_argument("--rounds", type=int, default=3)
p.add_argument("--networks", default="lenet,resnet-small")
p.add_argument("--batches", default="128,1")
p.add_argument("--accuracy", action="store_true")
p.add_argument("--epochs", type=int, default=2)
a = p.parse_args()


def run(cmd):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    rows = [json.loads(l) for l in out.splitlines() if l.startswith("{")]
    return rows[-1]


def iters(batch):
    return 2000 if batch == 1 else 40


def netloom(net, batch, engine):
    return run([os.path.join(a.build, "bench", "bench-infer"), "--network",
                os.path.join(ROOT, "data", "networks", net + ".json"), "--batch", str(batch),
                "--iters", str(iters(batch)), "--engine", engine])


def torch(net, batch, threads, int8):
    cmd = ["/usr/bin/python3", os.path.join(ROOT, "bench", "torch_infer.py"), "--network", net, "--batch",
           str(batch), "--threads", str(threads), "--iters", str(iters(batch))]
    return run(cmd + (["--int8"] if int8 else []))


CONFIGS = [("netloom program", lambda n, b: netloom(n, b, "program")),
           ("netloom fp32", lambda n, b: netloom(n, b, "fp32")),
           ("netloom int8", lambda n, b: netloom(n, b, "int8")),
           ("pytorch fp32 1t", lambda n, b: torch(n, b, 1, False)),
           ("pytorch fp32 2t", lambda n, b: torch(n, b, 2, False)),
           ("pytorch int8 1t", lambda n, b: torch(n, b, 1, True)),
           ("pytorch int8 2t", lambda n, b: torch(n, b, 2, True))]

results = {}
for r in range(a.rounds):
    for net in a.networks.split(","):
        for batch in map(int, a.batches.split(",")):
            for name, fn in CONFIGS:
                row = fn(net, batch)
                row["config"], row["round"] = name, r
                print(json.dumps(row), flush=True)
                results.setdefault((net, batch, name), []).append(row["images_per_s"])


def med(net, batch, name):
    return statistics.median(results[(net, batch, name)])


for net in a.networks.split(",") if a.rounds else []:
    for batch in map(int, a.batches.split(",")):
        m = {name: med(net, batch, name) for name, _ in CONFIGS}
        nl32 = max(m["netloom program"], m["netloom fp32"])
        pt32 = max(m["pytorch fp32 1t"], m["pytorch fp32 2t"])
        pt8 = max(m["pytorch int8 1t"], m["pytorch int8 2t"])
        s = {"summary": net, "batch": batch, **{k.replace(" ", "_") + "_images_per_s": round(v, 1) for k, v in m.items()},
             "netloom_fp32_best_latency_ms": round(1000 * batch / nl32, 4),
             "netloom_int8_latency_ms": round(1000 * batch / m["netloom int8"], 4),
             "pytorch_fp32_best_latency_ms": round(1000 * batch / pt32, 4),
             "pytorch_int8_best_latency_ms": round(1000 * batch / pt8, 4),
             "fp32_vs_pytorch_fp32": round(nl32 / pt32, 2),
             "int8_vs_netloom_fp32": round(m["netloom int8"] / nl32, 2),
             "int8_vs_pytorch_int8": round(m["netloom int8"] / pt8, 2)}
        print(json.dumps(s), flush=True)

if a.accuracy:
    cli = os.path.join(a.build, "app", "netloom-cli")
    lr = {"lenet": "0.05", "resnet-small": "0.1"}
    with tempfile.TemporaryDirectory() as tmp:
        for i, net in enumerate(a.networks.split(","), 1):
            proj = os.path.join(tmp, net + ".netloom")
            subprocess.run([cli, "project", "new", proj], check=True, capture_output=True)
            subprocess.run([cli, "train", "--project", proj, "--network",
                            os.path.join(ROOT, "data", "networks", net + ".json"), "--dataset", "fashion-mnist",
                            "--epochs", str(a.epochs), "--batch-size", "128", "--optimizer", "sgd",
                            "--lr", lr.get(net, "0.05"), "--json"], check=True, capture_output=True)
            for method in ("naive", "entropy"):
                q = run([cli, "quantize", "--project", proj, "--run", "1", "--method", method, "--json"])
                q.update({"accuracy": net, "method": method,
                          "points_lost": round(100 * (q["fp32_test_acc"] - q["int8_test_acc"]), 2)})
                print(json.dumps(q), flush=True)
