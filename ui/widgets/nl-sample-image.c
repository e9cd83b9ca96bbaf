/* nl-sample-image.c — dataset samples as pictures (see nl-sample-image.h). */
#include "ui/widgets/nl-sample-image.h"

#include <math.h>

void
nl_sample_image_clear (NlSampleImage *im)
{
  g_clear_pointer (&im->rgba, g_bytes_unref);
}

gboolean
nl_sample_image_from_sample (const float *x, const NlShape *s, int target, NlSampleImage *out)
{
  int channels, h, w, scale;
  guint8 *px;
  int64_t plane;
  if (s->ndim == 3 && (s->d[0] == 1 || s->d[0] == 3))
    channels = (int) s->d[0], h = (int) s->d[1], w = (int) s->d[2];
  else if (s->ndim == 2)
    channels = 1, h = (int) s->d[0], w = (int) s->d[1];
  else
    return FALSE;
  if (h < 1 || w < 1 || h > 4096 || w > 4096)
    return FALSE;
  scale = MAX (1, target / MAX (h, w));
  plane = (int64_t) h * w;
  out->width = w * scale;
  out->height = h * scale;
  px = g_malloc ((gsize) out->width * out->height * 4);
  for (int y = 0; y < out->height; y++)
    for (int xx = 0; xx < out->width; xx++)
      {
        int64_t k = (int64_t) (y / scale) * w + xx / scale;
        guint8 *p = px + ((gsize) y * out->width + xx) * 4;
        for (int c = 0; c < 3; c++)
          {
            float v = x[(channels == 3 ? c : 0) * plane + k];
            p[c] = (guint8) lrintf (CLAMP (v, 0.0f, 1.0f) * 255.0f);
          }
        p[3] = 255;
      }
  out->rgba = g_bytes_new_take (px, (gsize) out->width * out->height * 4);
  return TRUE;
}

GdkTexture *
nl_sample_image_texture (const NlSampleImage *im)
{
  if (!im->rgba)
    return NULL;
  return gdk_memory_texture_new (im->width, im->height, GDK_MEMORY_R8G8B8A8, im->rgba, (gsize) im->width * 4);
}
