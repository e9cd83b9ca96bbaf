/* nl-transform.c — spec parsing and the per-sample transforms: crops,
 * bilinear resize, flip, brightness, contrast, normalisation. */
#include "engine/data/nl-transform.h"

#include <math.h>
#include <string.h>

#include "engine/data/nl-dataset.h"

typedef enum {
  T_RANDOM_CROP,
  T_CENTER_CROP,
  T_RESIZE,
  T_FLIP,
  T_BRIGHTNESS,
  T_CONTRAST,
  T_NORMALIZE,
  T_TO_TENSOR,
} NlTransformKind;

typedef struct {
  NlTransformKind kind;
  int64_t w, h, pad;  /* crops and resize */
  double amount;      /* brightness, contrast */
  int n_mean, n_std;  /* normalize: 1 = every channel */
  float mean[NL_TRANSFORM_MAX_CHANNELS], std[NL_TRANSFORM_MAX_CHANNELS];
} NlTransformItem;

struct NlTransform {
  NlTransformItem *items;
  int n_items;
  int n_active; /* items that do something (all but to-tensor) */
  gboolean has_normalize;
  char *description;
};

/* ---- parsing ---- */

#define MAX_SIDE (1 << 20)

static gboolean
bad_item (GError **error, const char *item, const char *why)
{
  g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_SPEC, "bad transform '%s': %s", item, why);
  return FALSE;
}

static gboolean
parse_int (const char *s, int64_t min, int64_t *out)
{
  gint64 v;
  if (!g_ascii_string_to_signed (s, 10, min, MAX_SIDE, &v, NULL))
    return FALSE;
  *out = v;
  return TRUE;
}

/* "N" (square) or "WxH". */
static gboolean
parse_size (const char *s, int64_t *w, int64_t *h)
{
  const char *x = strpbrk (s, "xX");
  if (!x)
    {
      if (!parse_int (s, 1, w))
        return FALSE;
      *h = *w;
      return TRUE;
    }
  g_autofree char *ws = g_strndup (s, x - s);
  return parse_int (ws, 1, w) && parse_int (x + 1, 1, h);
}

static gboolean
parse_double (const char *s, double *out)
{
  char *end = NULL;
  if (!*s || g_ascii_isspace (*s))
    return FALSE;
  double v = g_ascii_strtod (s, &end);
  if (end == s || *end || !isfinite (v))
    return FALSE;
  *out = v;
  return TRUE;
}

/* "V1[/V2...]" into vals; returns the count, 0 on error. */
static int
parse_values (const char *s, float *vals, gboolean positive)
{
  g_auto (GStrv) parts = g_strsplit (s, "/", -1);
  int n = (int) g_strv_length (parts);
  if (n < 1 || n > NL_TRANSFORM_MAX_CHANNELS)
    return 0;
  for (int i = 0; i < n; i++)
    {
      double v;
      if (!parse_double (parts[i], &v) || (positive && v <= 0))
        return 0;
      vals[i] = (float) v;
    }
  return n;
}

static gboolean
parse_item (const char *item, NlTransformItem *it, GError **error)
{
  g_auto (GStrv) p = g_strsplit (item, ":", -1);
  int np = (int) g_strv_length (p);
  const char *name = p[0];
  memset (it, 0, sizeof *it);

  if (strcmp (name, "random-crop") == 0 || strcmp (name, "center-crop") == 0)
    {
      gboolean random = name[0] == 'r';
      it->kind = random ? T_RANDOM_CROP : T_CENTER_CROP;
      if (np < 2 || np > (random ? 3 : 2))
        return bad_item (error, item, random ? "expected random-crop:SIZE[:PADDING]" : "expected center-crop:SIZE");
      if (!parse_size (p[1], &it->w, &it->h))
        return bad_item (error, item, "SIZE must be N or WxH with positive integers");
      if (np == 3 && !parse_int (p[2], 0, &it->pad))
        return bad_item (error, item, "PADDING must be a non-negative integer");
      return TRUE;
    }
  if (strcmp (name, "resize") == 0)
    {
      it->kind = T_RESIZE;
      if (np != 2)
        return bad_item (error, item, "expected resize:WxH");
      if (!parse_size (p[1], &it->w, &it->h))
        return bad_item (error, item, "size must be N or WxH with positive integers");
      return TRUE;
    }
  if (strcmp (name, "flip") == 0 || strcmp (name, "to-tensor") == 0)
    {
      it->kind = name[0] == 'f' ? T_FLIP : T_TO_TENSOR;
      if (np != 1)
        return bad_item (error, item, "takes no arguments");
      return TRUE;
    }
  if (strcmp (name, "brightness") == 0 || strcmp (name, "contrast") == 0)
    {
      it->kind = name[0] == 'b' ? T_BRIGHTNESS : T_CONTRAST;
      if (np != 2)
        return bad_item (error, item, it->kind == T_BRIGHTNESS ? "expected brightness:X" : "expected contrast:X");
      if (!parse_double (p[1], &it->amount) || it->amount < 0 || it->amount > 1)
        return bad_item (error, item, "X must be a number in [0, 1]");
      return TRUE;
    }
  if (strcmp (name, "normalize") == 0)
    {
      it->kind = T_NORMALIZE;
      if (np != 3)
        return bad_item (error, item, "expected normalize:MEAN[/MEAN...]:STD[/STD...]");
      if (!(it->n_mean = parse_values (p[1], it->mean, FALSE)))
        return bad_item (error, item, "MEAN must be numbers separated by '/'");
      if (!(it->n_std = parse_values (p[2], it->std, TRUE)))
        return bad_item (error, item, "STD must be positive numbers separated by '/'");
      if (it->n_mean > 1 && it->n_std > 1 && it->n_mean != it->n_std)
        return bad_item (error, item, "MEAN and STD give different channel counts");
      return TRUE;
    }
  return bad_item (error, item,
                   "unknown transform (known: random-crop, center-crop, resize, flip, brightness, "
                   "contrast, normalize, to-tensor)");
}

static void
append_values (GString *s, const float *v, int n)
{
  for (int i = 0; i < n; i++)
    g_string_append_printf (s, "%s%g", i ? "/" : "", v[i]);
}

static char *
describe (const NlTransform *t)
{
  if (t->n_items == 0)
    return g_strdup ("identity");
  GString *s = g_string_new (NULL);
  for (int i = 0; i < t->n_items; i++)
    {
      const NlTransformItem *it = &t->items[i];
      if (i)
        g_string_append_c (s, ',');
      switch (it->kind)
        {
        case T_RANDOM_CROP:
          g_string_append_printf (s, "random-crop:%" G_GINT64_FORMAT "x%" G_GINT64_FORMAT ":%" G_GINT64_FORMAT,
                                  it->w, it->h, it->pad);
          break;
        case T_CENTER_CROP:
          g_string_append_printf (s, "center-crop:%" G_GINT64_FORMAT "x%" G_GINT64_FORMAT, it->w, it->h);
          break;
        case T_RESIZE:
          g_string_append_printf (s, "resize:%" G_GINT64_FORMAT "x%" G_GINT64_FORMAT, it->w, it->h);
          break;
        case T_FLIP:
          g_string_append (s, "flip");
          break;
        case T_BRIGHTNESS:
          g_string_append_printf (s, "brightness:%g", it->amount);
          break;
        case T_CONTRAST:
          g_string_append_printf (s, "contrast:%g", it->amount);
          break;
        case T_NORMALIZE:
          g_string_append (s, "normalize:");
          append_values (s, it->mean, it->n_mean);
          g_string_append_c (s, ':');
          append_values (s, it->std, it->n_std);
          break;
        case T_TO_TENSOR:
          g_string_append (s, "to-tensor");
          break;
        }
    }
  return g_string_free (s, FALSE);
}

NlTransform *
nl_transform_parse (const char *spec, GError **error)
{
  g_return_val_if_fail (spec != NULL, NULL);
  g_autoptr (NlTransform) t = g_new0 (NlTransform, 1);
  g_autofree char *stripped = g_strstrip (g_strdup (spec));
  if (*stripped)
    {
      g_auto (GStrv) items = g_strsplit (stripped, ",", -1);
      t->n_items = (int) g_strv_length (items);
      t->items = g_new0 (NlTransformItem, t->n_items);
      for (int i = 0; i < t->n_items; i++)
        {
          char *item = g_strstrip (items[i]);
          if (!*item)
            {
              g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_SPEC,
                           "bad transform spec '%s': item %d is empty", spec, i + 1);
              return NULL;
            }
          if (!parse_item (item, &t->items[i], error))
            return NULL;
          t->n_active += t->items[i].kind != T_TO_TENSOR;
          t->has_normalize |= t->items[i].kind == T_NORMALIZE;
        }
    }
  t->description = describe (t);
  return g_steal_pointer (&t);
}

void
nl_transform_free (NlTransform *t)
{
  if (!t)
    return;
  g_free (t->items);
  g_free (t->description);
  g_free (t);
}

const char *
nl_transform_describe (const NlTransform *t)
{
  g_return_val_if_fail (t != NULL, NULL);
  return t->description;
}

gboolean
nl_transform_is_identity (const NlTransform *t)
{
  return t == NULL || t->n_active == 0;
}

gboolean
nl_transform_has_normalize (const NlTransform *t)
{
  return t != NULL && t->has_normalize;
}

/* ---- shapes ---- */

typedef struct {
  int64_t c, h, w;
} Dims;

static gboolean
dims_of (const NlShape *s, Dims *d)
{
  if (s->ndim == 3)
    *d = (Dims) { s->d[0], s->d[1], s->d[2] };
  else if (s->ndim == 2)
    *d = (Dims) { 1, s->d[0], s->d[1] };
  else
    return FALSE;
  return d->c > 0 && d->h > 0 && d->w > 0;
}

static Dims
item_output (const NlTransformItem *it, Dims in)
{
  switch (it->kind)
    {
    case T_RANDOM_CROP:
    case T_CENTER_CROP:
    case T_RESIZE:
      return (Dims) { in.c, it->h, it->w };
    default:
      return in;
    }
}

gboolean
nl_transform_check (const NlTransform *t, const NlShape *in, GError **error)
{
  g_return_val_if_fail (t != NULL && in != NULL, FALSE);
  Dims d;
  char buf[96];
  if (!dims_of (in, &d))
    {
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_MISMATCH,
                   "transform '%s' needs (C, H, W) or (H, W) samples, not %s", t->description,
                   nl_shape_format (in, buf, sizeof buf));
      return FALSE;
    }
  for (int i = 0; i < t->n_items; i++)
    {
      const NlTransformItem *it = &t->items[i];
      if (it->kind == T_NORMALIZE && ((it->n_mean > 1 && it->n_mean != d.c) || (it->n_std > 1 && it->n_std != d.c)))
        {
          g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_MISMATCH,
                       "transform '%s': normalize gives %d values for samples with %" G_GINT64_FORMAT " channels",
                       t->description, MAX (it->n_mean, it->n_std), d.c);
          return FALSE;
        }
      d = item_output (it, d);
    }
  return TRUE;
}

static NlShape
shape_like (const NlShape *in, Dims d)
{
  return in->ndim == 3 ? nl_shape_of (3, d.c, d.h, d.w) : nl_shape_of (2, d.h, d.w);
}

NlShape
nl_transform_output_shape (const NlTransform *t, const NlShape *in)
{
  g_return_val_if_fail (t != NULL && in != NULL, NL_SHAPE_ABSENT);
  if (!nl_transform_check (t, in, NULL))
    return NL_SHAPE_ABSENT;
  Dims d;
  dims_of (in, &d);
  for (int i = 0; i < t->n_items; i++)
    d = item_output (&t->items[i], d);
  return shape_like (in, d);
}

/* Stages ping-pong between two scratch buffers and end in `out`, so the
 * scratch holds every intermediate output but the last. */
gsize
nl_transform_scratch_size (const NlTransform *t, const NlShape *in)
{
  g_return_val_if_fail (t != NULL && in != NULL, 0);
  Dims d;
  if (!dims_of (in, &d) || t->n_active < 2)
    return 0;
  int64_t biggest = 0;
  int seen = 0;
  for (int i = 0; i < t->n_items; i++)
    {
      if (t->items[i].kind == T_TO_TENSOR)
        continue;
      d = item_output (&t->items[i], d);
      if (++seen < t->n_active)
        biggest = MAX (biggest, d.c * d.h * d.w);
    }
  return (gsize) biggest * (t->n_active == 2 ? 1 : 2);
}

/* ---- randomness ---- */

static inline guint64
mix64 (guint64 z)
{
  z = (z ^ (z >> 30)) * G_GUINT64_CONSTANT (0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * G_GUINT64_CONSTANT (0x94D049BB133111EB);
  return z ^ (z >> 31);
}

/* A splitmix64 stream for item `item` of sample `index` in `epoch`: each
 * input goes through its own mixing round so that nearby tuples (index and
 * index + 1, epoch and epoch + 1) give unrelated streams. */
static guint64
stream_state (guint64 seed, int epoch, int64_t index, int item)
{
  guint64 h = mix64 (seed ^ G_GUINT64_CONSTANT (0x6A09E667F3BCC909));
  h = mix64 (h + (guint64) (guint32) epoch * G_GUINT64_CONSTANT (0x9E3779B97F4A7C15) + 1);
  h = mix64 (h ^ ((guint64) index * G_GUINT64_CONSTANT (0xD1B54A32D192ED03) + 0x3C6EF372FE94F82BULL));
  return mix64 (h + (guint64) item * G_GUINT64_CONSTANT (0xA54FF53A5F1D36F1));
}

static inline guint64
next64 (guint64 *s)
{
  return mix64 (*s += G_GUINT64_CONSTANT (0x9E3779B97F4A7C15));
}

/* Uniform in [0, n]; the bias of the multiply-shift is below 2^-40 for any
 * image size. */
static int64_t
draw_int (guint64 *s, int64_t n)
{
  __extension__ typedef unsigned __int128 u128;
  return (int64_t) (((u128) next64 (s) * (guint64) (n + 1)) >> 64);
}

/* Uniform in [-x, x]. */
static double
draw_sym (guint64 *s, double x)
{
  double u = (double) (next64 (s) >> 11) * 0x1.0p-53;
  return (2.0 * u - 1.0) * x;
}

/* ---- the transforms ---- */

/* dst (c, oh, ow) = src window at (oy, ox), which may reach outside src:
 * those pixels are zero. */
static void
crop (const float *src, Dims in, float *dst, int64_t oh, int64_t ow, int64_t oy, int64_t ox)
{
  int64_t j0 = CLAMP (-ox, 0, ow), j1 = CLAMP (in.w - ox, j0, ow);
  for (int64_t c = 0; c < in.c; c++)
    for (int64_t i = 0; i < oh; i++)
      {
        float *row = dst + (c * oh + i) * ow;
        int64_t sy = oy + i;
        if (sy < 0 || sy >= in.h)
          {
            memset (row, 0, ow * sizeof (float));
            continue;
          }
        const float *srow = src + (c * in.h + sy) * in.w + ox;
        memset (row, 0, j0 * sizeof (float));
        memcpy (row + j0, srow + j0, (j1 - j0) * sizeof (float));
        memset (row + j1, 0, (ow - j1) * sizeof (float));
      }
}

/* Source coordinate of output pixel i with half-pixel centres, clamped to
 * the image: the two neighbours and the weight of the second. */
static inline void
bilinear_coord (int64_t i, int64_t in, int64_t out, int64_t *i0, int64_t *i1, float *frac)
{
  double s = ((double) i + 0.5) * (double) in / (double) out - 0.5;
  if (s < 0)
    s = 0;
  int64_t lo = (int64_t) s;
  if (lo >= in - 1)
    {
      *i0 = *i1 = in - 1;
      *frac = 0;
      return;
    }
  *i0 = lo;
  *i1 = lo + 1;
  *frac = (float) (s - (double) lo);
}

static void
resize (const float *src, Dims in, float *dst, int64_t oh, int64_t ow)
{
  for (int64_t i = 0; i < oh; i++)
    {
      int64_t y0, y1;
      float fy;
      bilinear_coord (i, in.h, oh, &y0, &y1, &fy);
      for (int64_t j = 0; j < ow; j++)
        {
          int64_t x0, x1;
          float fx;
          bilinear_coord (j, in.w, ow, &x0, &x1, &fx);
          for (int64_t c = 0; c < in.c; c++)
            {
              const float *p = src + c * in.h * in.w;
              float top = p[y0 * in.w + x0] + (p[y0 * in.w + x1] - p[y0 * in.w + x0]) * fx;
              float bot = p[y1 * in.w + x0] + (p[y1 * in.w + x1] - p[y1 * in.w + x0]) * fx;
              dst[(c * oh + i) * ow + j] = top + (bot - top) * fy;
            }
        }
    }
}

static void
apply_item (const NlTransformItem *it, const float *src, Dims in, float *dst, guint64 *rng)
{
  int64_t n = in.c * in.h * in.w;
  switch (it->kind)
    {
    case T_RANDOM_CROP:
      {
        int64_t ry = in.h + 2 * it->pad - it->h, rx = in.w + 2 * it->pad - it->w;
        int64_t oy = ry > 0 ? draw_int (rng, ry) : 0;
        int64_t ox = rx > 0 ? draw_int (rng, rx) : 0;
        crop (src, in, dst, it->h, it->w, oy - it->pad, ox - it->pad);
        break;
      }
    case T_CENTER_CROP:
      {
        /* Floor division, so a crop bigger than the image centres it. */
        int64_t dy = in.h - it->h, dx = in.w - it->w;
        int64_t oy = dy >= 0 ? dy / 2 : -((-dy + 1) / 2);
        int64_t ox = dx >= 0 ? dx / 2 : -((-dx + 1) / 2);
        crop (src, in, dst, it->h, it->w, oy, ox);
        break;
      }
    case T_RESIZE:
      resize (src, in, dst, it->h, it->w);
      break;
    case T_FLIP:
      if (next64 (rng) >> 63)
        for (int64_t r = 0; r < in.c * in.h; r++)
          {
            const float *s = src + r * in.w;
            float *d = dst + r * in.w;
            for (int64_t j = 0; j < in.w; j++)
              d[j] = s[in.w - 1 - j];
          }
      else
        memcpy (dst, src, n * sizeof (float));
      break;
    case T_BRIGHTNESS:
      {
        float f = (float) (1.0 + draw_sym (rng, it->amount));
        for (int64_t k = 0; k < n; k++)
          dst[k] = src[k] * f;
        break;
      }
    case T_CONTRAST:
      {
        float f = (float) (1.0 + draw_sym (rng, it->amount));
        double sum = 0;
        for (int64_t k = 0; k < n; k++)
          sum += src[k];
        float m = (float) (sum / (double) n);
        float shift = m * (1.0f - f);
        for (int64_t k = 0; k < n; k++)
          dst[k] = src[k] * f + shift;
        break;
      }
    case T_NORMALIZE:
      {
        int64_t plane = in.h * in.w;
        for (int64_t c = 0; c < in.c; c++)
          {
            float m = it->mean[it->n_mean > 1 ? c : 0], s = it->std[it->n_std > 1 ? c : 0];
            const float *sp = src + c * plane;
            float *dp = dst + c * plane;
            for (int64_t k = 0; k < plane; k++)
              dp[k] = (sp[k] - m) / s;
          }
        break;
      }
    case T_TO_TENSOR:
      break;
    }
}

void
nl_transform_apply (const NlTransform *t, const float *in, const NlShape *in_shape, float *out,
                    guint64 seed, int epoch, int64_t sample_index, float *scratch)
{
  g_return_if_fail (t != NULL && in != NULL && in_shape != NULL && out != NULL);
  Dims d;
  g_return_if_fail (dims_of (in_shape, &d));
  if (t->n_active == 0)
    {
      memcpy (out, in, d.c * d.h * d.w * sizeof (float));
      return;
    }
  g_return_if_fail (t->n_active < 2 || scratch != NULL);

  /* Buffer halves for the ping-pong; with two stages only one is used. */
  int64_t half = t->n_active > 2 ? (int64_t) nl_transform_scratch_size (t, in_shape) / 2 : 0;
  const float *src = in;
  int seen = 0;
  for (int i = 0; i < t->n_items; i++)
    {
      const NlTransformItem *it = &t->items[i];
      if (it->kind == T_TO_TENSOR)
        continue;
      float *dst = ++seen == t->n_active ? out : scratch + (seen % 2) * half;
      guint64 rng = stream_state (seed, epoch, sample_index, i);
      apply_item (it, src, d, dst, &rng);
      d = item_output (it, d);
      src = dst;
    }
}
