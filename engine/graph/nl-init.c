/* nl-init.c — parameter initializers. */
#include "engine/graph/nl-init.h"
#include "core/nl-spec.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "core/nl-random.h"
#include "core/nl-threads.h"

G_DEFINE_QUARK (nl-initializer-error-quark, nl_initializer_error)

static const char *const factor_names[] = { "avg", "in", "out" };

/* initializer "SPEC": what is wrong */
static const NlSpecErrors spec_errors = {
  nl_initializer_error_quark, NL_INITIALIZER_ERROR_INVALID, "initializer \"", "\"",
};

/* A whole-string finite number; positive when asked. */
static gboolean
parse_number (const char *s, gboolean positive, float *out)
{
  double v;
  if (!nl_parse_double (s, &v) || fabs (v) > G_MAXFLOAT || (positive && !(v > 0)))
    return FALSE;
  *out = (float) v;
  return TRUE;
}

gboolean
nl_initializer_parse (const char *spec, NlInitializer *init, GError **error)
{
  static const struct {
    const char *name;
    NlInitializerKind kind;
    int max_opts;
    const char *usage;
  } kinds[] = {
    { "xavier", NL_INITIALIZER_XAVIER, 3, "xavier[:uniform|gaussian[:avg|in|out[:MAGNITUDE]]]" },
    { "msra", NL_INITIALIZER_MSRA, 1, "msra[:SLOPE]" },
    { "normal", NL_INITIALIZER_NORMAL, 1, "normal[:SIGMA]" },
    { "uniform", NL_INITIALIZER_UNIFORM, 1, "uniform[:SCALE]" },
    { "zeros", NL_INITIALIZER_ZEROS, 0, "zeros" },
    { "ones", NL_INITIALIZER_ONES, 0, "ones" },
    { "constant", NL_INITIALIZER_CONSTANT, 1, "constant:VALUE" },
  };
  g_auto (GStrv) parts = NULL;
  int n_opts, k;
  const char *name;
  NlInitializer r = {
    .kind = NL_INITIALIZER_XAVIER, .gaussian = FALSE, .factor_type = 0, .magnitude = 3.0f,
    .slope = 0.25f, .sigma = 0.01f, .scale = 0.07f, .value = 0.0f,
  };

  g_return_val_if_fail (init != NULL, FALSE);
  if (spec == NULL || *spec == '\0')
    return nl_spec_fail (error, &spec_errors,
                         "", "empty spec (try xavier, msra, normal, uniform, zeros, ones or constant:V)");
  parts = g_strsplit (spec, ":", -1);
  for (int i = 0; parts[i]; i++)
    g_strstrip (parts[i]);
  n_opts = (int) g_strv_length (parts) - 1;
  name = parts[0];
  for (k = 0; k < (int) G_N_ELEMENTS (kinds); k++)
    if (g_ascii_strcasecmp (name, kinds[k].name) == 0)
      break;
  if (k == G_N_ELEMENTS (kinds))
    return nl_spec_fail (error, &spec_errors, spec,
                         "unknown initializer '%s' (valid: xavier, msra, normal, uniform, zeros, ones, constant)",
                         name);
  if (n_opts > kinds[k].max_opts)
    return nl_spec_fail (error, &spec_errors, spec,
                         "unexpected '%s' (usage: %s)", parts[kinds[k].max_opts + 1], kinds[k].usage);
  r.kind = kinds[k].kind;

  switch (r.kind)
    {
    case NL_INITIALIZER_XAVIER:
      if (n_opts >= 1)
        {
          if (g_ascii_strcasecmp (parts[1], "gaussian") == 0)
            r.gaussian = TRUE;
          else if (g_ascii_strcasecmp (parts[1], "uniform") != 0)
            return nl_spec_fail (error, &spec_errors, spec, "rnd_type '%s' is not uniform or gaussian", parts[1]);
        }
      if (n_opts >= 2)
        {
          int f;
          for (f = 0; f < 3; f++)
            if (g_ascii_strcasecmp (parts[2], factor_names[f]) == 0)
              break;
          if (f == 3)
            return nl_spec_fail (error, &spec_errors, spec, "factor_type '%s' is not avg, in or out", parts[2]);
          r.factor_type = f;
        }
      if (n_opts >= 3 && !parse_number (parts[3], TRUE, &r.magnitude))
        return nl_spec_fail (error, &spec_errors, spec, "magnitude '%s' is not a positive number", parts[3]);
      break;
    case NL_INITIALIZER_MSRA:
      /* PyTorch kaiming_normal_: gaussian, fan_in */
      r.gaussian = TRUE;
      r.factor_type = 1;
      if (n_opts >= 1 && !parse_number (parts[1], FALSE, &r.slope))
        return nl_spec_fail (error, &spec_errors, spec, "slope '%s' is not a number", parts[1]);
      r.magnitude = 2.0f / (1.0f + r.slope * r.slope);
      break;
    case NL_INITIALIZER_NORMAL:
      if (n_opts >= 1 && !parse_number (parts[1], TRUE, &r.sigma))
        return nl_spec_fail (error, &spec_errors, spec, "sigma '%s' is not a positive number", parts[1]);
      break;
    case NL_INITIALIZER_UNIFORM:
      if (n_opts >= 1 && !parse_number (parts[1], TRUE, &r.scale))
        return nl_spec_fail (error, &spec_errors, spec, "scale '%s' is not a positive number", parts[1]);
      break;
    case NL_INITIALIZER_CONSTANT:
      if (n_opts < 1)
        return nl_spec_fail (error, &spec_errors, spec, "constant needs a value (usage: constant:VALUE)");
      if (!parse_number (parts[1], FALSE, &r.value))
        return nl_spec_fail (error, &spec_errors, spec, "value '%s' is not a number", parts[1]);
      break;
    case NL_INITIALIZER_ZEROS:
    case NL_INITIALIZER_ONES:
      break;
    }
  *init = r;
  return TRUE;
}

void
nl_initializer_fans (const NlShape *shape, int64_t *fan_in, int64_t *fan_out)
{
  int64_t in = 1, out = 1;
  if (shape->ndim == 1)
    in = out = shape->d[0];
  else if (shape->ndim >= 2)
    {
      int64_t receptive = 1;
      for (int i = 2; i < shape->ndim; i++)
        receptive *= shape->d[i];
      out = shape->d[0] * receptive;
      in = shape->d[1] * receptive;
    }
  *fan_in = in;
  *fan_out = out;
}

static void
fill_uniform (float *p, int64_t n, float lo, float hi, guint64 seed, guint64 stream)
{
  const float span = hi - lo;
#pragma omp parallel for if (n > NL_PAR_MIN) schedule (static)
  for (int64_t i = 0; i < n; i++)
    p[i] = lo + span * nl_rand_uniform (seed, stream, (guint64) i);
}

/* Box-Muller: uniforms 2k and 2k+1 give the gaussians of elements 2k and
 * 2k+1, so every element depends only on its own index pair. */
static void
fill_gaussian (float *p, int64_t n, float std, guint64 seed, guint64 stream)
{
  const int64_t n_pairs = (n + 1) / 2;
#pragma omp parallel for if (n > NL_PAR_MIN) schedule (static)
  for (int64_t k = 0; k < n_pairs; k++)
    {
      /* 1 - u1 is in (0, 1]: the log is finite. Float maths: exact enough
       * for initial weights, and faster than double (about 1.6x). */
      float u1 = nl_rand_uniform (seed, stream, (guint64) (2 * k));
      float u2 = nl_rand_uniform (seed, stream, (guint64) (2 * k + 1));
      float r = std * sqrtf (-2.0f * logf (1.0f - u1));
      float a = 2.0f * (float) G_PI * u2;
      float c = cosf (a), s = sinf (a); /* both here, so GCC makes one sincosf */
      p[2 * k] = r * c;
      if (2 * k + 1 < n)
        p[2 * k + 1] = r * s;
    }
}

void
nl_initializer_apply (const NlInitializer *init, NlTensor *w, guint64 seed, guint64 stream)
{
  int64_t n;
  float *p;

  g_return_if_fail (init != NULL && w != NULL);
  g_return_if_fail (w->dtype == NL_DTYPE_F32 && nl_tensor_is_contiguous (w));
  g_return_if_fail (nl_device_is_host (w->storage->device));
  n = nl_tensor_numel (w);
  p = nl_tensor_f32 (w);

  switch (init->kind)
    {
    case NL_INITIALIZER_ZEROS:
      nl_tensor_fill (w, 0.0f);
      break;
    case NL_INITIALIZER_ONES:
      nl_tensor_fill (w, 1.0f);
      break;
    case NL_INITIALIZER_CONSTANT:
      nl_tensor_fill (w, init->value);
      break;
    case NL_INITIALIZER_NORMAL:
      fill_gaussian (p, n, init->sigma, seed, stream);
      break;
    case NL_INITIALIZER_UNIFORM:
      fill_uniform (p, n, -init->scale, init->scale, seed, stream);
      break;
    case NL_INITIALIZER_XAVIER:
    case NL_INITIALIZER_MSRA:
      {
        NlShape shape = nl_tensor_get_shape (w);
        int64_t fan_in, fan_out;
        double factor, magnitude, scale;
        gboolean gaussian = init->gaussian;

        g_return_if_fail (init->factor_type >= 0 && init->factor_type <= 2);
        nl_initializer_fans (&shape, &fan_in, &fan_out);
        factor = init->factor_type == 1 ? (double) fan_in
               : init->factor_type == 2 ? (double) fan_out
               : (fan_in + fan_out) / 2.0;
        magnitude = init->magnitude;
        if (init->kind == NL_INITIALIZER_MSRA)
          {
            magnitude = 2.0 / (1.0 + (double) init->slope * init->slope);
            gaussian = TRUE;
          }
        scale = sqrt (magnitude / MAX (factor, 1.0));
        if (gaussian)
          fill_gaussian (p, n, (float) scale, seed, stream);
        else
          fill_uniform (p, n, (float) -scale, (float) scale, seed, stream);
      }
      break;
    default:
      g_return_if_reached ();
    }
}
