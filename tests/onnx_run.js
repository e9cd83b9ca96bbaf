// onnx_run.js — run an ONNX model with onnxruntime (npm onnxruntime-node) on
// the first N images of an MNIST-format IDX file, normalised as netloom's
// loader does: (byte / 255 - mean) / std. Prints one JSON array per image:
// the probabilities (Softmax applied when the model's output is not already
// "probabilities"). Usage: node onnx_run.js ORT_MODULE MODEL IDX N MEAN STD
'use strict';
const fs = require('fs');
const [ortPath, model, idx, nText, meanText, stdText] = process.argv.slice(2);
const ort = require(ortPath);

async function main() {
  const buf = fs.readFileSync(idx);
  const count = buf.readUInt32BE(4), h = buf.readUInt32BE(8), w = buf.readUInt32BE(12);
  const n = Math.min(parseInt(nText, 10), count), mean = parseFloat(meanText), std = parseFloat(stdText);
  const x = new Float32Array(n * h * w);
  for (let i = 0; i < n * h * w; i++)
    x[i] = (Math.fround(buf[16 + i] / 255) - mean) / std;
  const session = await ort.InferenceSession.create(model, { intraOpNumThreads: 1, interOpNumThreads: 1 });
  const feeds = {};
  feeds[session.inputNames[0]] = new ort.Tensor('float32', x, [n, 1, h, w]);
  const out = (await session.run(feeds))[session.outputNames[0]];
  const C = out.dims[1], probs = session.outputNames[0] === 'probabilities';
  for (let i = 0; i < n; i++) {
    let row = Array.from(out.data.slice(i * C, (i + 1) * C));
    if (!probs) {
      const m = Math.max(...row), e = row.map((v) => Math.exp(v - m)), s = e.reduce((a, b) => a + b, 0);
      row = e.map((v) => v / s);
    }
    console.log(JSON.stringify(row));
  }
}
main().catch((e) => { console.error(String(e)); process.exit(1); });
