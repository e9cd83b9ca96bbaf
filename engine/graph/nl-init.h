/* nl-init.h — parameter initializers (MXNet's, with PyTorch's kaiming for
 * MSRA). Deterministic: values come from a counter-based generator, so the
 * same (seed, stream) gives the same tensor whatever the thread count. */
#pragma once

#include <glib.h>

#include "core/nl-tensor.h"

G_BEGIN_DECLS

#define NL_INITIALIZER_ERROR (nl_initializer_error_quark ())
GQuark nl_initializer_error_quark (void);
typedef enum {
  NL_INITIALIZER_ERROR_INVALID,
} NlInitializerError;

typedef enum {
  NL_INITIALIZER_XAVIER,
  NL_INITIALIZER_MSRA,
  NL_INITIALIZER_NORMAL,
  NL_INITIALIZER_UNIFORM,
  NL_INITIALIZER_ZEROS,
  NL_INITIALIZER_ONES,
  NL_INITIALIZER_CONSTANT
} NlInitializerKind;

typedef struct {
  NlInitializerKind kind;
  gboolean gaussian; /* Xavier rnd_type: uniform (default) or gaussian */
  int factor_type;   /* 0 avg (default), 1 in, 2 out */
  float magnitude;   /* Xavier default 3; MSRA uses 2 / (1 + slope^2) whatever this says */
  float slope;       /* MSRA (PReLU) slope, default 0.25 as Gluon */
  float sigma;       /* Normal, default 0.01 */
  float scale;       /* Uniform(-scale, scale), default 0.07 */
  float value;       /* Constant */
} NlInitializer;

/* "xavier", "xavier:gaussian:in:2" (rnd_type:factor_type:magnitude, any
 * prefix; rnd_type uniform|gaussian, factor_type avg|in|out), "msra[:slope]",
 * "normal[:sigma]", "uniform[:scale]", "zeros", "ones", "constant:V".
 * Names are case-insensitive. Fills every field (defaults for the unused
 * ones). Errors name the bad part.
 *
 * MSRA is PyTorch's kaiming_normal_ (a = slope, mode fan_in): gaussian with
 * std sqrt (2 / (1 + slope^2) / fan_in). (Gluon's MSRAPrelu averages the
 * fans; we follow PyTorch. Set factor_type after parsing to change it.) */
gboolean nl_initializer_parse (const char *spec, NlInitializer *init, GError **error);

/* Fans from a weight shape. 2-D and more, (out, in, k...):
 * fan_in = in * prod (k), fan_out = out * prod (k). 1-D: both shape[0].
 * 0-D: both 1. */
void nl_initializer_fans (const NlShape *shape, int64_t *fan_in, int64_t *fan_out);

/* Fill w (F32, contiguous). Xavier: scale = sqrt (magnitude / factor) with
 * factor = (fan_in + fan_out) / 2 | fan_in | fan_out; uniform in
 * [-scale, scale) or gaussian with std scale. Uniform values are
 * nl_rand_uniform (seed, stream, i); gaussians come from Box-Muller on the
 * pair of uniforms (2k, 2k + 1) and fill elements 2k and 2k + 1. */
void nl_initializer_apply (const NlInitializer *init, NlTensor *w, guint64 seed, guint64 stream);

G_END_DECLS
