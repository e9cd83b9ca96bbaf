/* nl-train-input.h — where the training loop takes its batches: the
 * loader, or an epoch preloaded before the clock starts (the baseline the
 * loader is measured against). It counts how long the loop waited for
 * them (system/input_wait_ms) and, while profiling, traces each wait. */
#pragma once

#include <glib.h>

#include "core/nl-trace.h"
#include "engine/data/nl-loader.h"

G_BEGIN_DECLS

typedef struct {
  NlLoader *loader;         /* borrowed */
  /* the preloaded epoch (NULL: from the loader) */
  GPtrArray *data, *labels;
  GArray *counts;
  guint next;
  /* the loop's wait for batches, summed over every batch taken so far */
  gint64 wait_us, batches;
  NlTrace *trace;           /* borrowed; NULL: not profiling */
} NlTrainInput;

/* Drops the preloaded epoch, if any. */
void nl_train_input_clear (NlTrainInput *in);
/* The loader's whole epoch (started already) into memory, as tensors of
 * these shapes. */
gboolean nl_train_input_preload (NlTrainInput *in, const NlShape *data_shape, const NlShape *label_shape,
                                 GError **error);
/* The next batch into data and labels: its sample count, 0 at the epoch's
 * end, -1 with the error. */
int nl_train_input_next (NlTrainInput *in, NlTensor *data, NlTensor *labels, GError **error);

G_END_DECLS
