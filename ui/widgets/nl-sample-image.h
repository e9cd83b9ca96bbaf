/* nl-sample-image.h — a dataset sample (floats in [0, 1]) as an RGBA
 * picture, made on a worker thread and turned into a texture on the main
 * loop: the evaluation view's gallery of mistakes and its prediction panel. */
#pragma once

#include <gtk/gtk.h>

#include "core/nl-shape.h"

G_BEGIN_DECLS

typedef struct {
  GBytes *rgba;
  int width, height;
} NlSampleImage;

void nl_sample_image_clear (NlSampleImage *im);
/* A (1 or 3, H, W) or (H, W) sample in [0, 1] as RGBA, each pixel a
 * scale x scale block (nearest: pixels stay crisp), about target pixels on
 * its longer side. FALSE for other shapes. Thread-safe. */
gboolean nl_sample_image_from_sample (const float *x, const NlShape *s, int target, NlSampleImage *out);
/* NULL for an empty image. */
GdkTexture *nl_sample_image_texture (const NlSampleImage *im);

G_END_DECLS
