#!/usr/bin/python3
"""PyTorch 1.13 reference for bench/text_transformer_compare.py: the
text-transformer template (data/networks/text-transformer.json) as
nn.TransformerEncoder — Embedding (padding_idx 0) plus sinusoidal
positions, 2 post-norm encoder layers (width 128, 4 heads, feed-forward 512
with exact GELU, LayerNorm eps 1e-5, no dropout), the mean over each text's
valid steps, Linear — trained on the same token ids: the texts are
tokenized with GLib's own functions (through ctypes: g_utf8_strdown, then
runs of g_unichar_isalnum characters with the combining marks that follow
one, as engine/data/nl-tokenizer.c does) and looked up in the vocabulary
netloom built for its run (read from its project), <unk> 1, padded with 0
to --max-length, rows of no token left out as netloom leaves them out.
A sample's length is 1 + its last non-zero id (netloom's lengths
'nonzero'): later steps are masked from attention and from the mean.

  torch_text_transformer.py --train A.csv --test B.csv --vocab VOCAB.json
      [--max-length 128] [--epochs 3] [--batch 64] [--lr 0.001] [--threads 2] [--seed 0]

Adam (betas 0.9, 0.999, eps 1e-8, no weight decay) as netloom's adam.
Prints one JSON line per epoch: samples/s of the training loop, train
loss, test accuracy, peak RSS."""
import argparse, csv, ctypes, json, math, resource, sys, time

import torch
import torch.nn as nn

p = argparse.ArgumentParser()
p.add_argument("--train", required=True)
p.add_argument("--test", required=True)
p.add_argument("--vocab", required=True)
p.add_argument("--max-length", type=int, default=128)
p.add_argument("--epochs", type=int, default=3)
p.add_argument("--batch", type=int, default=64)
p.add_argument("--lr", type=float, default=1e-3)
p.add_argument("--threads", type=int, default=2)
p.add_argument("--seed", type=int, default=0)
p.add_argument("--input-dim", type=int, default=20000)
p.add_argument("--init", choices=["netloom", "torch"], default="netloom",
               help="netloom: the same initialisation rule as netloom (default); torch: PyTorch's own")
a = p.parse_args()
torch.set_num_threads(a.threads)
torch.manual_seed(a.seed)

glib = ctypes.CDLL("libglib-2.0.so.0")
glib.g_utf8_strdown.restype = ctypes.c_void_p
glib.g_utf8_strdown.argtypes = [ctypes.c_char_p, ctypes.c_ssize_t]
glib.g_unichar_isalnum.argtypes = [ctypes.c_uint32]
glib.g_unichar_ismark.argtypes = [ctypes.c_uint32]
glib.g_free.argtypes = [ctypes.c_void_p]


def words(text):
    raw = text.encode("utf-8")
    ptr = glib.g_utf8_strdown(raw, len(raw))
    lower = ctypes.string_at(ptr).decode("utf-8")
    glib.g_free(ptr)
    out, word = [], []
    for ch in lower:
        c = ord(ch)
        if glib.g_unichar_isalnum(c) or (word and glib.g_unichar_ismark(c)):
            word.append(ch)
        elif word:
            out.append("".join(word))
            word = []
    if word:
        out.append("".join(word))
    return out


vocab = json.load(open(a.vocab))
assert vocab["format"] == "netloom.vocab" and vocab["tokenizer"] == "word", "a word vocabulary of netloom"
ids = {t: i for i, t in enumerate(vocab["tokens"])}


def load(path):
    rows = list(csv.DictReader(open(path, newline="", encoding="utf-8")))
    classes = sorted({r["label"] for r in rows})
    xs, ys = [], []
    for r in rows:
        toks = words(r["text"])
        if not toks:
            continue
        x = [ids.get(t, 1) for t in toks[: a.max_length]]
        xs.append(x + [0] * (a.max_length - len(x)))
        ys.append(classes.index(r["label"]))
    return torch.tensor(xs, dtype=torch.long), torch.tensor(ys), classes


xtr, ytr, classes = load(a.train)
xte, yte, classes_te = load(a.test)
assert classes == classes_te, (classes, classes_te)


def netloom_init(model):
    """netloom's rule (engine/graph/nl-init.c): Xavier uniform (avg fan) on every
    weight matrix, one matrix at a time (attention's q, k and v separately),
    zero biases; LayerNorm gamma 1, beta 0. Embedding and positions keep
    normal 0.01 (set above)."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.MultiheadAttention):
                for w in m.in_proj_weight.chunk(3, 0):
                    nn.init.xavier_uniform_(w)
                nn.init.zeros_(m.in_proj_bias)
                nn.init.xavier_uniform_(m.out_proj.weight)
                nn.init.zeros_(m.out_proj.bias)
            elif isinstance(m, nn.Linear) and not isinstance(m, nn.modules.linear.NonDynamicallyQuantizableLinear):
                nn.init.xavier_uniform_(m.weight)
                nn.init.zeros_(m.bias)
            elif isinstance(m, nn.LayerNorm):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)


class TextTransformer(nn.Module):
    def __init__(self, n_classes, width=128, heads=4, ff=512, layers=2, max_len=512):
        super().__init__()
        self.embed = nn.Embedding(a.input_dim, width, padding_idx=0)
        nn.init.normal_(self.embed.weight, 0, 0.01)   # netloom's Embedding init (normal:0.01)
        with torch.no_grad():
            self.embed.weight[0].zero_()
        # learned positions, as data/networks/text-transformer.json (PositionalEmbedding mode learned,
        # initialised like netloom's: normal 0.01)
        self.pe = nn.Parameter(torch.randn(max_len, width) * 0.01)
        layer = nn.TransformerEncoderLayer(width, heads, ff, dropout=0.0, activation="gelu", batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.fc = nn.Linear(width, n_classes)
        if a.init == "netloom":
            netloom_init(self)

    def forward(self, x):
        T = x.shape[1]
        nz = (x != 0).long() * torch.arange(1, T + 1)
        length = nz.max(1).values.clamp(min=1)
        pad = torch.arange(T).unsqueeze(0) >= length.unsqueeze(1)
        h = (self.embed(x) + self.pe[:T]) * (~pad).unsqueeze(-1)
        h = self.encoder(h, src_key_padding_mask=pad)
        h = (h * (~pad).unsqueeze(-1)).sum(1) / length.unsqueeze(1)
        return self.fc(h)


model = TextTransformer(len(classes))
opt = torch.optim.Adam(model.parameters(), lr=a.lr, betas=(0.9, 0.999), eps=1e-8)
loss_fn = nn.CrossEntropyLoss()
g = torch.Generator().manual_seed(a.seed)
for epoch in range(1, a.epochs + 1):
    model.train()
    order = torch.randperm(len(xtr), generator=g)
    t0, total, n = time.perf_counter(), 0.0, 0
    for k in range(0, len(order), a.batch):
        idx = order[k:k + a.batch]
        opt.zero_grad()
        loss = loss_fn(model(xtr[idx]), ytr[idx])
        loss.backward()
        opt.step()
        total += loss.item() * len(idx)
        n += len(idx)
    seconds = time.perf_counter() - t0
    model.eval()
    with torch.no_grad():
        correct = sum(int((model(xte[k:k + 256]).argmax(1) == yte[k:k + 256]).sum())
                      for k in range(0, len(xte), 256))
    print(json.dumps({"impl": "pytorch", "epoch": epoch, "seconds": round(seconds, 4),
                      "samples_per_s": round(n / seconds, 2), "train_loss": round(total / n, 5),
                      "test_acc": round(correct / len(xte), 5), "train_samples": n, "test_samples": len(xte),
                      "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}),
          flush=True)
