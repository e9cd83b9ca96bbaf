/* nl-op-cases.c — the one table of op test cases (see nl-op-cases.h).
 *
 * Hints for one mode are ignored by the other: .samples and .h by compare
 * mode, .precision and .tol by gradient mode; .nograd is checked in
 * gradient mode only. Cases run in compare mode only where finite
 * differences cannot work: half-precision autocast (a CPU emulation against
 * itself, no gradient to check), wide inputs (float32 rounding of outputs
 * near 100 swamps a difference of 2h), and sizes made for the device's grid
 * paths that would take minutes of forwards here. */
#include <string.h>

#include "nl-op-cases.h"
#include "nl-test-util.h"
#include "ops/nl-op-registry.h"

#define P(...) { __VA_ARGS__, NULL }
#define LBL(k_) .gen = { NL_GEN_UNIFORM, NL_GEN_INT }, .k = (k_), .nograd = 2
#define COMPARE_ONLY .only = NL_OP_CASE_COMPARE
#define HALF_TOL 1e-2
#define BF16 .precision = NL_PRECISION_BF16, .tol = HALF_TOL, COMPARE_ONLY
#define FP16 .precision = NL_PRECISION_F16, .tol = HALF_TOL, COMPARE_ONLY
#define LARGE .samples = 8 /* gradient mode: a few elements of a large tensor */

/* pred = label + d with d clear of L1's kink at 0 */
static void
prep_l1 (NlTensor **in, const NlParamValue *p, const NlOpDef *def, GRand *r)
{
  float *x = nl_tensor_f32 (in[0]);
  const float *z = nl_tensor_f32 (in[1]);
  for (int64_t i = 0; i < nl_tensor_numel (in[0]); i++)
    {
      float d = (float) g_rand_double_range (r, 0.1, 1.5);
      x[i] = z[i] + (g_rand_boolean (r) ? d : -d);
    }
}

/* pred = label + d, |d| on both sides of rho, clear of it and of 0 */
static void
prep_huber (NlTensor **in, const NlParamValue *p, const NlOpDef *def, GRand *r)
{
  int k = nl_op_param_index (def, "rho");
  double rho = k >= 0 ? p[k].f : 1.0;
  float *x = nl_tensor_f32 (in[0]);
  const float *z = nl_tensor_f32 (in[1]);
  for (int64_t i = 0; i < nl_tensor_numel (in[0]); i++)
    {
      float d = i % 2 ? (float) g_rand_double_range (r, 0.2, 0.8) * rho
                      : (float) g_rand_double_range (r, 1.2 * rho, 1.2 * rho + 1.5);
      x[i] = z[i] + (g_rand_boolean (r) ? d : -d);
    }
}

const NlOpCase nl_op_cases[] = {
  /* ---- Input: no gradient, only the NULL in_grad is checked ---- */
  { "Input", "plain", .in = { "2x3x4" }, .nograd = 1 },
  { "Input", "lengths nonzero", P ("lengths", "nonzero"), .in = { "2x5" }, .nograd = 1 },

  /* ---- Dense ---- */
  { "Dense", "2d", P ("units", "4"), { "3x5" } },
  { "Dense", "odd sizes", P ("units", "1"), { "1x7" } },
  { "Dense", "no bias", P ("units", "3", "use_bias", "false"), { "4x6" } },
  { "Dense", "flatten 4d", P ("units", "5"), { "2x3x2x2" } },
  { "Dense", "flatten false 3d", P ("units", "4", "flatten", "false"), { "2x3x5" } },
  { "Dense", "in_units given", P ("units", "3", "in_units", "6"), { "2x2x3" } },
  { "Dense", "flatten false no bias", P ("units", "2", "flatten", "false", "use_bias", "false"), { "3x2x3" } },
  { "Dense", "large", P ("units", "130"), { "64x300" }, LARGE },
  { "Dense", "bf16", P ("units", "33"), { "16x70" }, BF16 },
  { "Dense", "fp16 no bias", P ("units", "17", "use_bias", "false"), { "8x2x20" }, FP16 },

  /* ---- Conv2D ---- */
  { "Conv2D", "3x3", P ("channels", "4", "kernel", "3"), { "2x3x6x6" } },
  { "Conv2D", "stride 2 pad 1", P ("channels", "3", "kernel", "3", "stride", "2", "padding", "1"),
    { "1x2x7x5" } },
  { "Conv2D", "pad 2 5x5", P ("channels", "2", "kernel", "5", "padding", "2"), { "2x2x5x6" } },
  { "Conv2D", "dilation 2", P ("channels", "3", "kernel", "3", "dilation", "2", "padding", "2"),
    { "1x2x9x8" } },
  { "Conv2D", "groups 2", P ("channels", "6", "kernel", "3", "groups", "2", "padding", "1"),
    { "2x4x5x5" } },
  { "Conv2D", "depthwise", P ("channels", "3", "kernel", "3", "groups", "3", "padding", "1"),
    { "1x3x6x6" } },
  { "Conv2D", "no bias", P ("channels", "2", "kernel", "3", "use_bias", "false"), { "2x2x5x5" } },
  { "Conv2D", "kernel 3x2", P ("channels", "3", "kernel", "3,2", "stride", "1,2", "padding", "1,0"),
    { "2x2x6x7" } },
  { "Conv2D", "1x1 stride 2 odd", P ("channels", "2", "kernel", "1", "stride", "2"), { "3x5x7x7" } },
  { "Conv2D", "1x1 stride 1 (no im2col)", P ("channels", "3", "kernel", "1"), { "2x4x3x5" } },
  { "Conv2D", "in_channels given", P ("channels", "2", "kernel", "2", "in_channels", "3"), { "2x3x4x4" } },
  { "Conv2D", "kernel 1x3 dilation 2x1",
    P ("channels", "4", "kernel", "1,3", "dilation", "2,1", "groups", "2", "use_bias", "false"),
    { "1x2x5x7" } },
  { "Conv2D", "large", P ("channels", "32", "kernel", "3", "padding", "1"), { "8x16x32x32" }, COMPARE_ONLY },
  { "Conv2D", "bf16", P ("channels", "8", "kernel", "3", "padding", "1"), { "2x4x9x9" }, BF16 },
  { "Conv2D", "fp16 stride 2 no bias", P ("channels", "8", "kernel", "3", "stride", "2", "use_bias", "false"),
    { "2x8x11x11" }, FP16 },

  /* ---- MaxPool2D (distinct inputs: the argmax never flips) ---- */
  { "MaxPool2D", "2x2", P ("pool_size", "2"), { "2x3x6x6" }, { NL_GEN_DISTINCT } },
  { "MaxPool2D", "3 stride 2", P ("pool_size", "3", "strides", "2"), { "1x2x7x7" }, { NL_GEN_DISTINCT } },
  { "MaxPool2D", "3 stride 1 pad 1", P ("pool_size", "3", "strides", "1", "padding", "1"), { "1x2x5x5" },
    { NL_GEN_DISTINCT } },
  { "MaxPool2D", "ceil mode", P ("pool_size", "2", "ceil_mode", "true"), { "1x2x5x5" }, { NL_GEN_DISTINCT } },
  { "MaxPool2D", "ceil pad 3 stride 2",
    P ("pool_size", "3", "strides", "2", "padding", "1", "ceil_mode", "true"), { "2x1x6x7" },
    { NL_GEN_DISTINCT } },
  { "MaxPool2D", "2x3 stride 1x2", P ("pool_size", "2,3", "strides", "1,2"), { "1x3x5x7" }, { NL_GEN_DISTINCT } },
  { "MaxPool2D", "large", P ("pool_size", "3", "strides", "2", "padding", "1"), { "2x4x64x64" },
    { NL_GEN_DISTINCT }, LARGE },

  /* ---- AvgPool2D ---- */
  { "AvgPool2D", "2x2", P ("pool_size", "2"), { "2x3x6x6" } },
  { "AvgPool2D", "3 stride 2", P ("pool_size", "3", "strides", "2"), { "1x2x7x7" } },
  { "AvgPool2D", "pad 1 include pad", P ("pool_size", "3", "strides", "1", "padding", "1"), { "1x2x5x5" } },
  { "AvgPool2D", "pad 1 exclude pad",
    P ("pool_size", "3", "strides", "2", "padding", "1", "count_include_pad", "false"), { "2x2x5x6" } },
  { "AvgPool2D", "ceil mode exclude pad",
    P ("pool_size", "3", "strides", "2", "padding", "1", "ceil_mode", "true", "count_include_pad", "false"),
    { "1x2x6x6" } },
  { "AvgPool2D", "ceil include pad", P ("pool_size", "3", "strides", "2", "padding", "1", "ceil_mode", "true"),
    { "1x2x6x6" } },
  { "AvgPool2D", "ceil mode", P ("pool_size", "2", "ceil_mode", "true"), { "1x2x5x5" } },
  { "AvgPool2D", "2x3 stride 1x2", P ("pool_size", "2,3", "strides", "1,2"), { "1x3x5x7" } },
  { "AvgPool2D", "large", P ("pool_size", "3", "strides", "2", "padding", "1", "count_include_pad", "false"),
    { "2x4x64x64" }, LARGE },

  /* ---- GlobalAvgPool2D ---- */
  { "GlobalAvgPool2D", "4x5", .in = { "2x3x4x5" } },
  { "GlobalAvgPool2D", "1x1 plane", .in = { "3x2x1x1" } },
  { "GlobalAvgPool2D", "odd", .in = { "1x1x3x3" } },
  { "GlobalAvgPool2D", "large", .in = { "2x4x65x64" }, LARGE },

  /* ---- BatchNorm ---- */
  { "BatchNorm", "training nchw", .in = { "2x3x4x4" } },
  { "BatchNorm", "training 2d", .in = { "5x4" } },
  { "BatchNorm", "training odd", .in = { "3x1x3x5" } },
  { "BatchNorm", "training one sample", .in = { "1x3" } }, /* count 1: the biased variance goes to running_var */
  { "BatchNorm", "training no center", P ("center", "false", "momentum", "0.7"), { "4x3x2x3" } },
  { "BatchNorm", "training no scale", P ("scale", "false", "epsilon", "0.01"), { "2x2x3x3" } },
  { "BatchNorm", "training neither", P ("center", "false", "scale", "false"), { "6x3" } },
  { "BatchNorm", "training global stats", P ("use_global_stats", "true"), { "2x3x3x3" } },
  { "BatchNorm", "training large", .in = { "2x64x16x17" }, LARGE },
  { "BatchNorm", "training 16 samples large", .in = { "16x64x16x17" }, COMPARE_ONLY },
  { "BatchNorm", "predict nchw", .in = { "2x3x4x4" }, .predict = TRUE },
  { "BatchNorm", "predict 2d", .in = { "3x5" }, .predict = TRUE },

  /* ---- LayerNorm ---- */
  { "LayerNorm", "2d", .in = { "3x5" } },
  { "LayerNorm", "3d", .in = { "2x3x4" } },
  { "LayerNorm", "odd", .in = { "1x7" } },
  { "LayerNorm", "predict", .in = { "4x6" }, .predict = TRUE },
  { "LayerNorm", "no center", P ("center", "false"), { "3x4" } },
  { "LayerNorm", "no scale", P ("scale", "false"), { "2x5" } },
  { "LayerNorm", "neither", P ("center", "false", "scale", "false", "epsilon", "0.001"), { "2x3x3" } },
  { "LayerNorm", "large", .in = { "65x512" }, LARGE },
  { "LayerNorm", "large rows of 1024", .in = { "65x1024" }, COMPARE_ONLY },

  /* ---- Dropout (mask fixed by seed and step) ---- */
  { "Dropout", "training 0.5", P ("rate", "0.5"), { "2x3x4x4" } },
  { "Dropout", "training 0.2 odd", P ("rate", "0.2"), { "3x7" } },
  { "Dropout", "training rate 0", P ("rate", "0"), { "5x5" } },
  { "Dropout", "training large", P ("rate", "0.3"), { "2x20001" }, LARGE },
  { "Dropout", "training larger", P ("rate", "0.3"), { "4x100003" }, LARGE },
  { "Dropout", "predict", P ("rate", "0.5"), { "3x5" }, .predict = TRUE },

  /* ---- Activation (relu's inputs clear of its kink) ---- */
  { "Activation", "relu", P ("act_type", "relu"), { "3x7" }, { NL_GEN_AWAY0 } },
  { "Activation", "sigmoid", P ("act_type", "sigmoid"), { "2x3x4" } },
  { "Activation", "tanh", P ("act_type", "tanh"), { "2x3x4" } },
  { "Activation", "softrelu", P ("act_type", "softrelu"), { "5x3" } },
  { "Activation", "sigmoid wide", P ("act_type", "sigmoid"), { "4x999" }, { NL_GEN_WIDE }, COMPARE_ONLY },
  { "Activation", "softrelu wide", P ("act_type", "softrelu"), { "4x999" }, { NL_GEN_WIDE }, COMPARE_ONLY },
  /* large enough for the OpenMP paths and the device's grid */
  { "Activation", "relu large", P ("act_type", "relu"), { "4x9001" }, { NL_GEN_AWAY0 }, LARGE },
  { "Activation", "relu larger", P ("act_type", "relu"), { "4x90001" }, { NL_GEN_AWAY0 }, LARGE },
  { "Activation", "sigmoid large", P ("act_type", "sigmoid"), { "3x3001" }, LARGE },

  /* ---- LeakyReLU ---- */
  { "LeakyReLU", "default alpha", .in = { "3x7" }, .gen = { NL_GEN_AWAY0 } },
  { "LeakyReLU", "alpha 0.3", P ("alpha", "0.3"), { "2x3x2x2" }, { NL_GEN_AWAY0 } },
  { "LeakyReLU", "alpha 0 large", P ("alpha", "0"), { "2x20000" }, { NL_GEN_AWAY0 }, LARGE },

  /* ---- GELU ---- */
  { "GELU", "erf", P ("approximation", "erf"), { "3x7" } },
  { "GELU", "tanh", P ("approximation", "tanh"), { "2x3x4" } },
  { "GELU", "erf large", P ("approximation", "erf"), { "2x3x40x40" }, LARGE },
  { "GELU", "erf wide", P ("approximation", "erf"), { "2x3x40x40" }, { NL_GEN_WIDE }, COMPARE_ONLY },
  { "GELU", "tanh wide", P ("approximation", "tanh"), { "3x1000" }, { NL_GEN_WIDE }, COMPARE_ONLY },

  /* ---- Structure ---- */
  { "Flatten", "4d", .in = { "2x3x4x5" } },
  { "Flatten", "2d", .in = { "3x7" } },
  { "Flatten", "large", .in = { "2x3x80x80" }, LARGE },
  { "Reshape", "keep and infer", P ("shape", "[0, -1]"), { "2x3x4" } },
  { "Reshape", "explicit", P ("shape", "[3, 2, 2, 1]"), { "2x6" } },
  { "Reshape", "large", P ("shape", "[-1, 100]"), { "4x10000" }, LARGE },
  { "Concat", "3 inputs dim 1", P ("dim", "1"), { "2x3x4", "2x2x4", "2x1x4" } },
  { "Concat", "3 inputs dim 2", P ("dim", "2"), { "2x3x1", "2x3x4", "2x3x2" } },
  { "Concat", "2 inputs dim -1", P ("dim", "-1"), { "3x2", "3x5" } },
  { "Concat", "dim 0", P ("dim", "0"), { "1x3", "2x3" } },
  { "Concat", "large", P ("dim", "1"), { "4x5000", "4x5001" }, LARGE },
  { "Concat", "4 inputs large", P ("dim", "1"), { "4x5000", "4x5001", "4x3", "4x7000" }, LARGE },
  { "Add", "3 inputs", .in = { "2x3x4", "2x3x4", "2x3x4" } },
  { "Add", "2 inputs", .in = { "5x3", "5x3" } },
  { "Add", "3 inputs large", .in = { "33000", "33000", "33000" }, LARGE },
  { "Add", "4 inputs large", .in = { "33000", "33000", "33000", "33000" }, LARGE },

  /* ---- Mul / Sub: two inputs, or one and a constant (aux) broadcast over it ---- */
  { "Mul", "2 inputs", .in = { "2x3x4", "2x3x4" } },
  { "Mul", "scalar constant", .in = { "3x5" } },
  { "Mul", "per channel constant", P ("operand_shape", "[3, 1, 1]"), { "2x3x4x4" } },
  { "Mul", "per feature constant", P ("operand_shape", "[1, 5]"), { "4x2x5" } },
  { "Mul", "row constant over 4d", P ("operand_shape", "[1, 5]"), { "2x3x2x5" } },
  { "Mul", "middle block constant", P ("operand_shape", "[2, 1, 4]"), { "2x2x3x4" } },
  { "Mul", "2 inputs large", .in = { "4x9001", "4x9001" }, LARGE },
  { "Mul", "constant large", P ("operand_shape", "[7, 1, 1]"), { "4x7x40x41" }, LARGE },
  { "Sub", "2 inputs", .in = { "2x3x4", "2x3x4" } },
  { "Sub", "scalar constant", .in = { "3x5" } },
  { "Sub", "per channel constant reversed", P ("operand_shape", "[3, 1, 1]", "reverse", "true"), { "2x3x4x4" } },
  { "Sub", "middle constant", P ("operand_shape", "[4, 1]"), { "2x3x4x5" } },
  { "Sub", "2 inputs large", .in = { "4x9001", "4x9001" }, LARGE },
  { "Sub", "constant large", P ("operand_shape", "[41]"), { "4x7x40x41" }, LARGE },

  /* ---- Transpose ---- */
  { "Transpose", "swap last two", P ("axes", "[0, 2, 1]"), { "2x3x4" } },
  { "Transpose", "default reverse", .in = { "2x3x4x5" } },
  { "Transpose", "channels last", P ("axes", "[0, 2, 3, 1]"), { "2x3x4x5" } },
  { "Transpose", "identity", P ("axes", "[0, 1]"), { "3x5" } },
  { "Transpose", "large", P ("axes", "[0, 3, 1, 2]"), { "4x30x40x17" }, LARGE },

  /* ---- Softmax / LogSoftmax ---- */
  { "Softmax", "axis -1", P ("axis", "-1"), { "3x5" } },
  { "Softmax", "axis 0", P ("axis", "0"), { "3x5" } },
  { "Softmax", "axis 1 of 3d", P ("axis", "1"), { "2x3x4" } },
  { "Softmax", "axis -1 of 3d", .in = { "2x3x4" } },
  { "Softmax", "large", .in = { "40x111" }, LARGE },
  { "Softmax", "large axis 0", P ("axis", "0"), { "111x40" }, LARGE },
  { "Softmax", "larger axis 0", P ("axis", "0"), { "1111x40" }, COMPARE_ONLY },
  { "Softmax", "wide", .in = { "40x111" }, .gen = { NL_GEN_WIDE }, COMPARE_ONLY },
  { "LogSoftmax", "axis -1", P ("axis", "-1"), { "3x5" } },
  { "LogSoftmax", "axis 0", P ("axis", "0"), { "3x5" } },
  { "LogSoftmax", "axis 1 of 3d", P ("axis", "1"), { "2x3x4" } },
  { "LogSoftmax", "large", .in = { "40x111" }, LARGE },
  { "LogSoftmax", "wide", .in = { "40x1111" }, .gen = { NL_GEN_WIDE }, COMPARE_ONLY },

  /* ---- Embedding (indices take no gradient; repeats scatter-add) ---- */
  { "Embedding", "2d indices", P ("input_dim", "5", "output_dim", "4"), { "2x4" }, { NL_GEN_INT }, .k = 5,
    .nograd = 1 },
  { "Embedding", "1d indices", P ("input_dim", "7", "output_dim", "3"), { "6" }, { NL_GEN_INT }, .k = 7,
    .nograd = 1 },
  { "Embedding", "large", P ("input_dim", "50", "output_dim", "400"), { "101" }, { NL_GEN_INT }, .k = 50,
    .nograd = 1, LARGE },
  /* many repeats of few rows: the scatter-add of the gradient collides */
  { "Embedding", "large repeats", P ("input_dim", "50", "output_dim", "400"), { "64x33" }, { NL_GEN_INT },
    .k = 50, .nograd = 1, LARGE },

  { "Embedding", "padding index", P ("input_dim", "5", "output_dim", "3", "padding_index", "0"), { "3x4" },
    { NL_GEN_INT }, .k = 3, .nograd = 1 },
  { "Embedding", "padding index last", P ("input_dim", "6", "output_dim", "4", "padding_index", "5"), { "2x7" },
    { NL_GEN_INT }, .k = 6, .nograd = 1 },

  /* ---- MatMul ---- */
  { "MatMul", "3d", .in = { "2x3x4", "2x4x5" } },
  { "MatMul", "2d", .in = { "3x4", "4x2" } },
  { "MatMul", "transpose a", P ("transpose_a", "true"), { "2x4x3", "2x4x5" } },
  { "MatMul", "transpose b", P ("transpose_b", "true"), { "2x3x4", "2x5x4" } },
  { "MatMul", "transpose both", P ("transpose_a", "true", "transpose_b", "true"), { "2x4x3", "2x5x4" } },
  { "MatMul", "4d", .in = { "2x2x3x4", "2x2x4x3" } },
  { "MatMul", "shared b", .in = { "2x3x4", "4x5" } },
  { "MatMul", "shared b transposed", P ("transpose_b", "true"), { "2x3x4", "5x4" } },
  { "MatMul", "shared b transpose a", P ("transpose_a", "true"), { "3x4x3", "4x5" } },
  { "MatMul", "shared b transpose both", P ("transpose_a", "true", "transpose_b", "true"), { "2x4x3", "5x4" } },
  { "MatMul", "large", .in = { "16x33x40", "16x40x20" }, LARGE },
  { "MatMul", "large shared transposed", P ("transpose_b", "true"), { "8x50x64", "70x64" }, LARGE },

  /* ---- MultiHeadAttention (lengths: keys past them masked, padded queries 0) ---- */
  { "MultiHeadAttention", "self", P ("heads", "2"), { "2x3x4" } },
  { "MultiHeadAttention", "self lengths", P ("heads", "2"), { "2x4x4" }, .lengths = "4,2" },
  { "MultiHeadAttention", "causal", P ("heads", "2", "causal", "true"), { "2x4x4" } },
  { "MultiHeadAttention", "causal lengths", P ("heads", "1", "causal", "true"), { "3x5x3" }, .lengths = "3,5,1" },
  { "MultiHeadAttention", "cross", P ("heads", "2"), { "2x3x4", "2x5x6" } },
  { "MultiHeadAttention", "cross same steps lengths", P ("heads", "2"), { "2x4x4", "2x4x6" }, .lengths = "2,4" },
  { "MultiHeadAttention", "cross other steps lengths", P ("heads", "2", "causal", "true"), { "2x3x4", "2x5x2" },
    .lengths = "2,3" },
  { "MultiHeadAttention", "key_size units no bias",
    P ("heads", "3", "key_size", "2", "units", "5", "use_bias", "false"), { "2x3x4" } },
  { "MultiHeadAttention", "dropout", P ("heads", "2", "dropout", "0.3"), { "2x4x4" }, .lengths = "3,4" },
  { "MultiHeadAttention", "predict", P ("heads", "2", "dropout", "0.3"), { "2x3x4" }, .predict = TRUE },
  { "MultiHeadAttention", "large", P ("heads", "4", "use_bias", "false"), { "4x20x32" }, .lengths = "20,7,1,13", LARGE },
  { "MultiHeadAttention", "larger causal", P ("heads", "4", "causal", "true", "dropout", "0.1"), { "8x64x64" },
    .lengths = "64,1,30,64,2,50,63,9", COMPARE_ONLY },

  /* ---- PositionalEmbedding ---- */
  { "PositionalEmbedding", "learned", P ("max_length", "8"), { "2x5x3" } },
  { "PositionalEmbedding", "learned lengths", P ("max_length", "6"), { "3x6x2" }, .lengths = "6,2,4" },
  { "PositionalEmbedding", "sinusoidal", P ("mode", "sinusoidal"), { "2x5x6" } },
  { "PositionalEmbedding", "sinusoidal odd lengths", P ("mode", "sinusoidal"), { "3x4x5" }, .lengths = "1,4,2" },
  { "PositionalEmbedding", "large", P ("max_length", "128"), { "4x100x128" }, .lengths = "100,3,50,99", LARGE },

  /* ---- SequencePool (max: distinct inputs, one winner) ---- */
  { "SequencePool", "last", P ("mode", "last"), { "2x4x3" }, .lengths = "4,2" },
  { "SequencePool", "last full", P ("mode", "last"), { "2x4x3" } },
  { "SequencePool", "mean", P ("mode", "mean"), { "2x5x3" }, .lengths = "3,1" },
  { "SequencePool", "mean full", .in = { "3x2x4" } },
  { "SequencePool", "max", P ("mode", "max"), { "2x4x3" }, { NL_GEN_DISTINCT }, .lengths = "2,4" },
  { "SequencePool", "max full", P ("mode", "max"), { "2x3x5" }, { NL_GEN_DISTINCT } },
  { "SequencePool", "large mean", .in = { "4x100x64" }, .lengths = "100,1,37,99", LARGE },
  { "SequencePool", "large max", P ("mode", "max"), { "4x100x64" }, { NL_GEN_DISTINCT },
    .lengths = "100,1,37,99", LARGE },

  /* ---- Losses (the label takes no gradient) ---- */
  { "SoftmaxCrossEntropy", "sparse", .in = { "4x5", "4" }, LBL (5) },
  { "SoftmaxCrossEntropy", "sparse trailing 1", .in = { "3x7", "3x1" }, LBL (7) },
  { "SoftmaxCrossEntropy", "sparse 3d", .in = { "2x3x4", "2x3" }, LBL (4) },
  { "SoftmaxCrossEntropy", "dense", P ("sparse_label", "false"), { "4x5", "4x5" }, { NL_GEN_UNIFORM, NL_GEN_DIST },
    .nograd = 2 },
  { "SoftmaxCrossEntropy", "from logits sparse", P ("from_logits", "true"), { "3x4", "3" }, LBL (4) },
  { "SoftmaxCrossEntropy", "from logits dense", P ("from_logits", "true", "sparse_label", "false"),
    { "3x4", "3x4" }, { NL_GEN_UNIFORM, NL_GEN_DIST }, .nograd = 2 },
  { "SoftmaxCrossEntropy", "large", .in = { "64x130", "64" }, LBL (130), LARGE },
  { "SoftmaxCrossEntropy", "wide large", .in = { "256x1000", "256" }, .gen = { NL_GEN_WIDE, NL_GEN_INT },
    .k = 1000, .nograd = 2, COMPARE_ONLY },
  { "SigmoidBinaryCrossEntropy", "0/1 labels", .in = { "4x3", "4x3" }, .gen = { NL_GEN_UNIFORM, NL_GEN_BINARY },
    .nograd = 2 },
  { "SigmoidBinaryCrossEntropy", "soft labels", .in = { "3x5", "3x5" }, .gen = { NL_GEN_UNIFORM, NL_GEN_PROB },
    .nograd = 2 },
  { "SigmoidBinaryCrossEntropy", "from sigmoid", P ("from_sigmoid", "true"), { "4x3", "4x3" },
    { NL_GEN_PROB, NL_GEN_BINARY }, .nograd = 2, .h = 1e-3 },
  { "SigmoidBinaryCrossEntropy", "1d", .in = { "5", "5" }, .gen = { NL_GEN_UNIFORM, NL_GEN_BINARY }, .nograd = 2 },
  { "SigmoidBinaryCrossEntropy", "large", .in = { "8x1100", "8x1100" }, .gen = { NL_GEN_UNIFORM, NL_GEN_BINARY },
    .nograd = 2, LARGE },
  { "SigmoidBinaryCrossEntropy", "wide", .in = { "8x1100", "8x1100" }, .gen = { NL_GEN_WIDE, NL_GEN_BINARY },
    .nograd = 2, COMPARE_ONLY },
  { "L2Loss", "2d", .in = { "4x3", "4x3" }, .nograd = 2 },
  { "L2Loss", "4d", .in = { "2x3x2x2", "2x3x2x2" }, .nograd = 2 },
  { "L2Loss", "large", .in = { "8x1100", "8x1100" }, .nograd = 2, LARGE },
  { "L2Loss", "4d large", .in = { "8x3x30x30", "8x3x30x30" }, .nograd = 2, LARGE },
  { "L1Loss", "2d", .in = { "4x3", "4x3" }, .nograd = 2, .prep = prep_l1 },
  { "L1Loss", "1d", .in = { "5", "5" }, .nograd = 2, .prep = prep_l1 },
  { "L1Loss", "large", .in = { "8x1100", "8x1100" }, .nograd = 2, .prep = prep_l1, LARGE },
  { "HuberLoss", "rho 1", .in = { "4x6", "4x6" }, .nograd = 2, .prep = prep_huber },
  { "HuberLoss", "rho 0.5", P ("rho", "0.5"), { "3x4", "3x4" }, .nograd = 2, .prep = prep_huber },
  { "HuberLoss", "large", .in = { "8x1100", "8x1100" }, .nograd = 2, .prep = prep_huber, LARGE },
  { "HuberLoss", "rho 0.3 large", P ("rho", "0.3"), { "8x1100", "8x1100" }, .nograd = 2, .prep = prep_huber,
    LARGE },

  /* ---- LSTM, GRU (with lengths the padded steps must get no gradient:
   * finite differences there are 0) ---- */
/* dropout: cuDNN draws its own mask, so only the gradient check; classic
 * GRU (only_): CPU only, cuDNN has no classic GRU (test-op-cases lists the
 * gap) */
#define RNN_CASES(op_, pre_, only_, st1_, st2_, ...)                                                                   \
  { op_, pre_ "one layer", P ("units", "4", __VA_ARGS__), { "2x3x5" }, .only = only_ },                         \
  { op_, pre_ "last", P ("units", "3", "output", "last", __VA_ARGS__), { "3x4x2" } },                           \
  { op_, pre_ "lengths", P ("units", "3", __VA_ARGS__), { "2x4x3" }, .lengths = "4,2", .only = only_ },                        \
  { op_, pre_ "last lengths bidirectional",                                                                     \
    P ("units", "3", "output", "last", "bidirectional", "true", __VA_ARGS__), { "3x4x2" }, .lengths = "2,4,1", .only = only_ }, \
  { op_, pre_ "bidirectional concat", P ("units", "3", "bidirectional", "true", __VA_ARGS__), { "2x3x4" }, .only = only_ },    \
  { op_, pre_ "bidirectional sum lengths",                                                                      \
    P ("units", "3", "bidirectional", "true", "merge", "sum", __VA_ARGS__), { "2x4x3" }, .lengths = "3,4", .only = only_ },    \
  { op_, pre_ "last sum",                                                                                       \
    P ("units", "2", "bidirectional", "true", "merge", "sum", "output", "last", __VA_ARGS__), { "2x3x3" }, .only = only_ },    \
  { op_, pre_ "two layers bidirectional lengths",                                                               \
    P ("units", "3", "layers", "2", "bidirectional", "true", __VA_ARGS__), { "2x4x3" }, .lengths = "4,3", .only = only_ },     \
  { op_, pre_ "two layers dropout", P ("units", "3", "layers", "2", "dropout", "0.3", __VA_ARGS__),            \
    { "2x3x2" }, .only = NL_OP_CASE_GRAD },                                                                                              \
  { op_, pre_ "state", P ("units", "3", "output", "last", __VA_ARGS__), { "2x3x2", st1_ }, .only = only_ },                   \
  { op_, pre_ "state two layers bidirectional lengths",                                                         \
    P ("units", "2", "layers", "2", "bidirectional", "true", __VA_ARGS__), { "2x3x2", st2_ }, .lengths = "1,3", .only = only_ }
  RNN_CASES ("LSTM", "", 0, "2x2x3", "2x8x2", NULL),
  RNN_CASES ("GRU", "", 0, "2x1x3", "2x4x2", NULL),
  RNN_CASES ("GRU", "classic ", NL_OP_CASE_GRAD, "2x1x3", "2x4x2", "variant", "classic"),
#undef RNN_CASES
};
const guint nl_op_n_cases = G_N_ELEMENTS (nl_op_cases);

gboolean
nl_op_case_runs_in (const NlOpCase *c, NlOpCaseMode mode)
{
  return c->only == 0 || (c->only & mode) != 0;
}

GRand *
nl_op_case_rand (const NlOpCase *c)
{
  return g_rand_new_with_seed (g_str_hash (c->op) ^ (g_str_hash (c->what) * 31u));
}

NlOpInstance *
nl_op_case_instance (const NlOpDef *def, const NlOpCase *c, GError **error)
{
  NlShape shapes[NL_OP_CASE_MAX_DATA];
  NlOpInstance *inst;
  int n_data = 0;

  while (n_data < NL_OP_CASE_MAX_DATA && c->in[n_data])
    {
      shapes[n_data] = nl_test_parse_shape (c->in[n_data]);
      n_data++;
    }
  inst = nl_op_instance_new (def, c->params, n_data, shapes, !c->predict, error);
  if (inst && c->lengths)
    {
      g_auto (GStrv) parts = g_strsplit (c->lengths, ",", -1);
      int64_t n = g_strv_length (parts);
      float *len;
      g_assert_cmpint (n, ==, shapes[0].d[0]); /* one length per sample */
      inst->lengths = nl_tensor_new (NL_DTYPE_F32, 1, &n);
      len = nl_tensor_f32 (inst->lengths);
      for (int64_t b = 0; b < n; b++)
        len[b] = (float) g_ascii_strtod (parts[b], NULL);
    }
  return inst;
}

void
nl_op_case_uniform (NlTensor *t, GRand *r, double lo, double hi)
{
  float *p = nl_tensor_f32 (t);
  for (int64_t i = 0; i < nl_tensor_numel (t); i++)
    p[i] = (float) g_rand_double_range (r, lo, hi);
}

static void
generate (NlTensor *t, NlOpCaseGen gen, int k, GRand *r)
{
  float *p = nl_tensor_f32 (t);
  int64_t n = nl_tensor_numel (t);

  switch (gen)
    {
    case NL_GEN_UNIFORM:
      nl_op_case_uniform (t, r, -1, 1);
      break;
    case NL_GEN_WIDE:
      nl_op_case_uniform (t, r, -100, 100);
      break;
    case NL_GEN_AWAY0:
      for (int64_t i = 0; i < n; i++)
        {
          float m = (float) g_rand_double_range (r, 0.1, 1);
          p[i] = g_rand_boolean (r) ? m : -m;
        }
      break;
    case NL_GEN_DISTINCT:
      for (int64_t i = 0; i < n; i++)
        p[i] = (float) ((double) i - n / 2) * 0.1f;
      for (int64_t i = n - 1; i > 0; i--)
        {
          int64_t j = g_rand_int_range (r, 0, (gint32) i + 1);
          float tmp = p[i];
          p[i] = p[j];
          p[j] = tmp;
        }
      break;
    case NL_GEN_INT:
      g_assert_cmpint (k, >, 0);
      for (int64_t i = 0; i < n; i++)
        p[i] = (float) g_rand_int_range (r, 0, k);
      break;
    case NL_GEN_BINARY:
      for (int64_t i = 0; i < n; i++)
        p[i] = g_rand_boolean (r) ? 1.0f : 0.0f;
      break;
    case NL_GEN_PROB:
      nl_op_case_uniform (t, r, 0.05, 0.95);
      break;
    case NL_GEN_DIST:
      {
        int64_t c = t->shape[t->ndim - 1];
        nl_op_case_uniform (t, r, 0.05, 1);
        for (int64_t row = 0; row < n / c; row++)
          {
            double s = 0;
            for (int64_t j = 0; j < c; j++)
              s += p[row * c + j];
            for (int64_t j = 0; j < c; j++)
              p[row * c + j] = (float) (p[row * c + j] / s);
          }
      }
      break;
    }
}

void
nl_op_case_fill (const NlOpCase *c, NlOpInstance *inst, GRand *r)
{
  for (int i = 0; i < inst->n_data; i++)
    generate (inst->in[i], c->gen[i], c->k, r);
  for (int i = inst->n_data; i < inst->n_in; i++)
    if (inst->in[i])
      nl_op_case_uniform (inst->in[i], r, -1, 1);
  for (int i = 0; i < inst->def->n_aux; i++)
    if (inst->aux[i])
      nl_op_case_uniform (inst->aux[i], r, 0.5, 1.5);
  if (c->prep)
    c->prep (inst->in, inst->p, inst->def, r);
}
