#!/usr/bin/env python3
"""torch_onnx_seq_models.py OUT_DIR — PyTorch 1.13's torch.onnx.export of
batch_first nn.LSTM and nn.GRU (1 and 2 layers, one and two directions;
classifiers on h_n[-1] and on y[:, -1])
and of nn.TransformerEncoderLayer (post-norm ReLU, pre-norm GELU), with random weights (biases too), and
what PyTorch computes on a random (N, T, C) input: for each model NAME,
OUT_DIR/NAME.onnx, NAME.x and NAME.y (raw little-endian float32) and a
line "NAME N,T,C OUT_DIMS" in OUT_DIR/models.txt. Exits 77 with the reason
on stderr when torch is missing."""
import os
import sys

try:
    import torch
    from torch import nn
except ImportError as e:
    sys.stderr.write("no torch: %s\n" % e)
    sys.exit(77)


class Rnn(nn.Module):
    def __init__(self, cell, **kw):
        super().__init__()
        self.rnn = cell(batch_first=True, **kw)

    def forward(self, x):
        y, _ = self.rnn(x)
        return y


class LastState(nn.Module):
    """A classifier on h_n[-1] (the final state) or on y[:, -1] (the last step)."""
    def __init__(self, cell, from_y, **kw):
        super().__init__()
        self.rnn = cell(batch_first=True, **kw)
        self.fc = nn.Linear(kw["hidden_size"], 3)
        self.from_y = from_y

    def forward(self, x):
        y, h = self.rnn(x)
        if self.from_y:
            return self.fc(y[:, -1, :])
        return self.fc((h[0] if isinstance(h, tuple) else h)[-1])


def main():
    out = sys.argv[1]
    torch.manual_seed(7)
    models = [
        ("lstm1", Rnn(nn.LSTM, input_size=5, hidden_size=6), 13),
        ("lstm2bi", Rnn(nn.LSTM, input_size=5, hidden_size=4, num_layers=2, bidirectional=True), 14),
        ("gru1", Rnn(nn.GRU, input_size=5, hidden_size=6), 14),
        ("gru2bi", Rnn(nn.GRU, input_size=5, hidden_size=3, num_layers=2, bidirectional=True), 13),
        ("lstm1bi", Rnn(nn.LSTM, input_size=5, hidden_size=3, bidirectional=True), 14),
        ("lstm-h-last", LastState(nn.LSTM, False, input_size=5, hidden_size=6), 14),
        ("gru2-y-last", LastState(nn.GRU, True, input_size=5, hidden_size=4, num_layers=2), 14),
        ("encoder", nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16, dropout=0.0,
                                               batch_first=True), 14),
        ("encoder-gelu-prenorm", nn.TransformerEncoderLayer(d_model=8, nhead=4, dim_feedforward=12, dropout=0.0,
                                                            activation="gelu", norm_first=True, batch_first=True), 13),
    ]
    lines = []
    for name, model, opset in models:
        for p in model.parameters():
            p.data.uniform_(-0.5, 0.5)
        model.eval()
        c = 8 if name.startswith("encoder") else 5
        x = torch.randn(3, 7, c)
        path = os.path.join(out, name + ".onnx")
        torch.onnx.export(model, x, path, input_names=["x"], output_names=["y"], opset_version=opset,
                          dynamic_axes={"x": {0: "N"}, "y": {0: "N"}})
        with torch.no_grad():
            y = model(x)
        x.numpy().astype("<f4").tofile(os.path.join(out, name + ".x"))
        y.numpy().astype("<f4").tofile(os.path.join(out, name + ".y"))
        lines.append("%s %s %s\n" % (name, ",".join(map(str, x.shape)), ",".join(map(str, y.shape))))
    with open(os.path.join(out, "models.txt"), "w") as f:
        f.writelines(lines)


if __name__ == "__main__":
    main()
