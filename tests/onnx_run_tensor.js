// onnx_run_tensor.js — run an ONNX model with onnxruntime (npm onnxruntime-node)
// on one float32 input read from a raw little-endian file, and print its first
// output as JSON {"dims": [...], "data": [...]}. Usage:
//   node onnx_run_tensor.js ORT_MODULE MODEL INPUT.f32 D0,D1,...
'use strict';
const fs = require('fs');
const [ortPath, model, input, dimsText] = process.argv.slice(2);
const ort = require(ortPath);

async function main() {
  const buf = fs.readFileSync(input);
  const x = new Float32Array(buf.buffer, buf.byteOffset, buf.length / 4);
  const dims = dimsText.split(',').map((d) => parseInt(d, 10));
  const session = await ort.InferenceSession.create(model, { intraOpNumThreads: 1, interOpNumThreads: 1 });
  const feeds = {};
  feeds[session.inputNames[0]] = new ort.Tensor('float32', Float32Array.from(x), dims);
  const out = (await session.run(feeds))[session.outputNames[0]];
  console.log(JSON.stringify({ dims: out.dims, data: Array.from(out.data) }));
}
main().catch((e) => { console.error(String(e)); process.exit(1); });
