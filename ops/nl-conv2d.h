/* nl-conv2d.h — Conv2D as its CPU kernels (ops/cpu/conv2d.c) and CUDA
 * kernels (ops/cuda/conv2d.cu) see it: parameters, typed arguments. */
#pragma once

#include "ops/nl-op.h"

G_BEGIN_DECLS

enum {
  CONV_CHANNELS, CONV_KERNEL, CONV_STRIDE, CONV_PADDING, CONV_DILATION, CONV_GROUPS, CONV_USE_BIAS, CONV_IN_CHANNELS,
  CONV_N
};

/* The (h, w) pairs as [0] = h, [1] = w. */
typedef struct {
  int64_t channels;
  int64_t kernel[2], stride[2], padding[2], dilation[2];
  int64_t groups;
  int64_t in_channels; /* 0: inferred from the data */
  gboolean use_bias;
} NlConv2dArgs;

G_END_DECLS
