/* nl-shape.h — a shape without storage: what shape inference works on. */
#pragma once

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

G_BEGIN_DECLS

#define NL_MAX_DIMS 6

/* ndim == -1 marks an absent tensor (e.g. the bias of a Dense with
 * use_bias=false). */
typedef struct {
  int ndim;
  int64_t d[NL_MAX_DIMS];
} NlShape;

#define NL_SHAPE_ABSENT ((NlShape) { .ndim = -1 })

/* The most elements a shape given in a network (an Input's sample, a
 * Reshape's target) may hold: 2^40, far beyond any sample, and small
 * enough that a batch of them (at most 2^20 samples) in 8-byte elements
 * still counts its bytes in an int64. */
#define NL_SHAPE_MAX_NUMEL ((int64_t) 1 << 40)

NlShape nl_shape_make (int ndim, const int64_t *dims);
NlShape nl_shape_of (int ndim, ...); /* nl_shape_of (2, (int64_t) 3, (int64_t) 4) */
int64_t nl_shape_numel (const NlShape *s);
gboolean nl_shape_equal (const NlShape *a, const NlShape *b);
/* (n, s...): a batch of n items of shape s (ndim 0 or less: (n)) */
NlShape nl_shape_batched (int64_t n, const NlShape *s);
/* "(128, 1, 28, 28)"; buf of at least 96 bytes */
char *nl_shape_format (const NlShape *s, char *buf, size_t size);

G_END_DECLS
