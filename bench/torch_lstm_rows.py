#!/usr/bin/python3
"""PyTorch reference of the lstm-rows benchmark (bench/lstm_rows_compare.py):
Fashion-MNIST read row by row, nn.LSTM(28, 128, batch_first=True), the last
step's output into nn.Linear(128, 10); SGD at netloom's default lr (0.1),
batch 128, inputs scaled to [0,1] then normalised with mean 0.13, std 0.31
as netloom does. One JSON line per epoch, like torch_fashion_mnist.py:
{"impl","network","threads","epoch","seconds","images_per_s","train_loss",
"test_acc","peak_rss_mb"}; timing covers the training loop only.

  torch_lstm_rows.py [--epochs 2] [--threads 2] [--batch-size 128] [--lr 0.1]
                     [--seed 0] [--data /usr/share/datasets/fashion-mnist] [--init netloom|torch]
"""
import argparse, gzip, json, os, resource, sys, time

import numpy as np
import torch

p = argparse.ArgumentParser()
p.add_argument("--epochs", type=int, default=2)
p.add_argument("--threads", type=int, default=2)
p.add_argument("--batch-size", type=int, default=128)
p.add_argument("--lr", type=float, default=0.1)
p.add_argument("--seed", type=int, default=0)
p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
p.add_argument("--init", choices=["netloom", "torch"], default="netloom",
               help="netloom: its initialisation (Xavier uniform, avg fan, on every weight matrix; zero biases), "
                    "so that the two runs differ only by their random streams; torch: PyTorch's defaults")
a = p.parse_args()
# the netlib reference BLAS makes PyTorch many times slower: an unfair baseline
_blas = os.path.realpath("/usr/lib/x86_64-linux-gnu/libblas.so.3")
if "/blas/libblas.so" in _blas:
    sys.exit("torch_lstm_rows.py: libblas.so.3 is the reference BLAS (%s)" % _blas)
torch.set_num_threads(a.threads)
torch.manual_seed(a.seed)


def idx(name, offset):
    path = os.path.join(a.data, name)
    opener = gzip.open if os.path.exists(path + ".gz") else open
    with opener(path + ".gz" if opener is gzip.open else path, "rb") as f:
        return np.frombuffer(f.read(), np.uint8, offset=offset)


def images(name):
    x = (idx(name, 16).reshape(-1, 28, 28) / 255.0 - 0.13) / 0.31
    return torch.tensor(x, dtype=torch.float32)


class LstmRows(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(28, 128, batch_first=True)
        self.fc = torch.nn.Linear(128, 10)

    def forward(self, x):
        _, (h, _) = self.lstm(x)
        return self.fc(h[-1])


X, Y = images("train-images-idx3-ubyte"), torch.tensor(idx("train-labels-idx1-ubyte", 8), dtype=torch.long)
Xt, Yt = images("t10k-images-idx3-ubyte"), torch.tensor(idx("t10k-labels-idx1-ubyte", 8), dtype=torch.long)
net = LstmRows()
if a.init == "netloom":
    # the same rule netloom applies (engine/graph/nl-init.c, xavier avg = torch's xavier_uniform_)
    for name, w in net.named_parameters():
        if w.dim() == 2:
            torch.nn.init.xavier_uniform_(w)
        else:
            torch.nn.init.zeros_(w)
opt = torch.optim.SGD(net.parameters(), lr=a.lr)
loss_fn = torch.nn.CrossEntropyLoss()
B = a.batch_size
for epoch in range(1, a.epochs + 1):
    perm = torch.randperm(len(X))
    total, batches = 0.0, 0
    t0 = time.perf_counter()
    for i in range(0, len(X), B):
        j = perm[i:i + B]
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(net(X[j]), Y[j])
        loss.backward()
        opt.step()
        total += loss.item()
        batches += 1
    dt = time.perf_counter() - t0
    with torch.no_grad():
        acc = sum((net(Xt[k:k + 1000]).argmax(1) == Yt[k:k + 1000]).sum().item()
                  for k in range(0, len(Xt), 1000)) / len(Xt)
    print(json.dumps({"impl": "pytorch", "network": "lstm-rows", "threads": a.threads, "epoch": epoch,
                      "seconds": round(dt, 4), "images_per_s": round(len(X) / dt, 1),
                      "train_loss": round(total / batches, 5), "test_acc": round(acc, 5),
                      "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}),
          flush=True)
