/* nl-seq-lengths.c — sequence lengths from the padding of a batch. */
#include "engine/graph/nl-seq-lengths.h"

void
nl_seq_lengths_compute (const float *batch, const NlShape *batch_shape, float *lengths)
{
  int64_t n = batch_shape->d[0], steps = batch_shape->ndim >= 2 ? batch_shape->d[1] : 1;
  int64_t per_step = 1;

  for (int i = 2; i < batch_shape->ndim; i++)
    per_step *= batch_shape->d[i];
  for (int64_t b = 0; b < n; b++)
    {
      const float *x = batch + b * steps * per_step;
      int64_t len = steps;
      /* scan back from the end: trailing padding is usually short */
      for (; len > 1; len--)
        {
          const float *row = x + (len - 1) * per_step;
          gboolean any = FALSE;
          for (int64_t k = 0; k < per_step && !any; k++)
            any = row[k] != 0.0f;
          if (any)
            break;
        }
      lengths[b] = (float) len;
    }
}
