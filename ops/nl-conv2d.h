/* nl-conv2d.h — Conv2D as its definition, CPU kernels (ops/cpu/conv2d.c) and CUDA
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

/* One input shape through the arguments: what both devices' kernels index by. */
typedef struct {
  int64_t n, c, h, w;    /* input */
  int64_t o, oh, ow;     /* output */
  int64_t kh, kw, sh, sw, ph, pw, dh, dw;
  int64_t groups, cg, og; /* channels per group, in and out */
  int64_t ckk;           /* rows of a group's column matrix: cg * kh * kw */
  int64_t ohw;           /* its columns: oh * ow */
  gboolean direct;       /* 1x1, stride 1, no padding: the input is the column matrix */
} NlConv2dGeom;

/* out = floor((in + 2p - d(k-1) - 1) / s) + 1; span < 0 means no window fits */
static inline int64_t
nl_conv2d_out_span (int64_t in, int64_t k, int64_t s, int64_t p, int64_t d)
{
  return in + 2 * p - d * (k - 1) - 1;
}

/* The geometry of an (n, c, h, w) input. */
static inline void
nl_conv2d_geom_init (NlConv2dGeom *g, const NlConv2dArgs *a, int64_t n, int64_t c, int64_t h, int64_t w)
{
  g->n = n;
  g->c = c;
  g->h = h;
  g->w = w;
  g->o = a->channels;
  g->kh = a->kernel[0];
  g->kw = a->kernel[1];
  g->sh = a->stride[0];
  g->sw = a->stride[1];
  g->ph = a->padding[0];
  g->pw = a->padding[1];
  g->dh = a->dilation[0];
  g->dw = a->dilation[1];
  g->groups = a->groups;
  g->cg = g->c / g->groups;
  g->og = g->o / g->groups;
  g->oh = nl_conv2d_out_span (g->h, g->kh, g->sh, g->ph, g->dh) / g->sh + 1;
  g->ow = nl_conv2d_out_span (g->w, g->kw, g->sw, g->pw, g->dw) / g->sw + 1;
  g->ckk = g->cg * g->kh * g->kw;
  g->ohw = g->oh * g->ow;
  g->direct = g->kh == 1 && g->kw == 1 && g->sh == 1 && g->sw == 1 && g->ph == 0 && g->pw == 0;
}

G_END_DECLS
