/* nl-transform.h — per-sample data augmentation and normalisation, Gluon's
 * `transform_first`: applied to the sample, never to the label.
 *
 * Samples are float32 CHW as NlDataset.get returns them (images in [0, 1]);
 * a 2-d (H, W) sample is treated as one channel and stays 2-d.
 *
 * Randomness comes only from (seed, epoch, sample_index), through a hash
 * with a separate stream per transform in the list: the same sample in the
 * same epoch gets the same crop and flip whatever thread or order processes
 * it, so a threaded loader's batches equal a single-threaded one's. */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "core/nl-tensor.h"

G_BEGIN_DECLS

/* A list of transforms, applied left to right. Immutable once parsed, so one
 * may be shared by any number of threads. */
typedef struct NlTransform NlTransform;

#define NL_TRANSFORM_MAX_CHANNELS 16

/* spec: comma-separated items (spaces around items are ignored; "" is the
 * identity):
 *   random-crop:SIZE[:PADDING]  zero-pad PADDING pixels on every side, then
 *                               crop SIZE at a uniformly random offset
 *                               (SIZE is N for NxN, or WxH)
 *   center-crop:SIZE            crop SIZE from the centre (an image smaller
 *                               than SIZE is centred in zeros)
 *   resize:WxH                  bilinear, half-pixel centres (OpenCV's
 *                               INTER_LINEAR, PyTorch align_corners=False;
 *                               no antialiasing when shrinking); N means NxN
 *   flip                        left-right mirror with probability 0.5
 *   brightness:X                multiply by 1 + u, u uniform in [-X, X]
 *   contrast:X                  mean + (x - mean) * (1 + u), u in [-X, X],
 *                               mean over the whole image (all channels)
 *   normalize:M1[/M2..]:S1[/S2..]  (x - M[c]) / S[c]; one value means the
 *                               same for every channel
 *   to-tensor                   a no-op: samples are already float CHW in
 *                               [0, 1], which is what Gluon's ToTensor makes
 * X of brightness and contrast is in [0, 1]; neither clamps the result.
 * Errors (NL_DATA_ERROR_SPEC) quote the bad item. */
NlTransform *nl_transform_parse (const char *spec, GError **error);

/* Whether t can take samples of shape `in`: 2 or 3 dims, and a normalize
 * with several values has one per channel. */
gboolean nl_transform_check (const NlTransform *t, const NlShape *in, GError **error);

/* Sample shape after all transforms (same ndim as `in`); NL_SHAPE_ABSENT
 * when nl_transform_check would fail. */
NlShape nl_transform_output_shape (const NlTransform *t, const NlShape *in);

/* Floats of scratch nl_transform_apply needs for samples of shape `in`. */
gsize nl_transform_scratch_size (const NlTransform *t, const NlShape *in);

/* Transform one sample: `in` (numel of in_shape) into `out` (numel of the
 * output shape; must not overlap `in`). scratch: at least
 * nl_transform_scratch_size floats (may be NULL when that is 0). */
void nl_transform_apply (const NlTransform *t, const float *in, const NlShape *in_shape, float *out,
                         guint64 seed, int epoch, int64_t sample_index, float *scratch);

/* The canonical spec, e.g. "random-crop:32x32:4,flip"; "identity" when
 * empty. Owned by t. */
const char *nl_transform_describe (const NlTransform *t);

/* TRUE when t changes nothing (empty, or only to-tensor). */
gboolean nl_transform_is_identity (const NlTransform *t);

/* TRUE when t contains a normalize (the loader then skips its own mean/std). */
gboolean nl_transform_has_normalize (const NlTransform *t);

void nl_transform_free (NlTransform *t);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (NlTransform, nl_transform_free)

G_END_DECLS
