// onnx_run_tensor.js — run ONNX models with onnxruntime (npm onnxruntime-node),
// each on one float32 input read from a raw little-endian file, and print
// each one's first output as a JSON line {"dims": [...], "data": [...]}, in
// the order given (one node process for many models: starting it is the
// slow part). Usage:
//   node onnx_run_tensor.js ORT_MODULE MODEL INPUT.f32 D0,D1,... [MODEL INPUT DIMS ...]
'use strict';
const fs = require('fs');
const [ortPath, ...jobs] = process.argv.slice(2);
const ort = require(ortPath);

async function run(model, input, dimsText) {
  const buf = fs.readFileSync(input);
  const x = new Float32Array(buf.buffer, buf.byteOffset, buf.length / 4);
  const dims = dimsText.split(',').map((d) => parseInt(d, 10));
  const session = await ort.InferenceSession.create(model, { intraOpNumThreads: 1, interOpNumThreads: 1 });
  const feeds = {};
  feeds[session.inputNames[0]] = new ort.Tensor('float32', Float32Array.from(x), dims);
  const out = (await session.run(feeds))[session.outputNames[0]];
  return JSON.stringify({ dims: out.dims, data: Array.from(out.data) });
}

async function main() {
  for (let i = 0; i + 2 < jobs.length; i += 3) {
    try {
      console.log(await run(jobs[i], jobs[i + 1], jobs[i + 2]));
    } catch (e) {
      console.error(jobs[i] + ': ' + String(e));
      process.exit(1);
    }
  }
}
main();
