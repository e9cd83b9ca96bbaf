/* fuzz-checkpoint.c — a safetensors file (engine/formats/nl-safetensors.c) parsed
 * and walked, then loaded into a small model (NL_FUZZ_SMALL_NETWORK) as a
 * checkpoint (engine/formats/nl-checkpoint.c) and as a weights file. */
#include <stdio.h>
#include <stdlib.h>
#include <glib/gstdio.h>

#include "nl-fuzz.h"
#include "engine/formats/nl-checkpoint.h"
#include "engine/train/nl-optim.h"
#include "engine/formats/nl-safetensors.h"

static NlModel *
small_model (void)
{
  static NlModel *model;
  if (model)
    return model;
  g_autoptr (GError) error = NULL;
  g_autoptr (NlNetwork) net = nl_network_load_data (NL_FUZZ_SMALL_NETWORK, -1, &error);
  NlShape sample = nl_shape_of (3, (int64_t) 1, (int64_t) 4, (int64_t) 4);
  NlOptimConfig cfg;
  nl_optim_config_init (&cfg, NL_OPTIM_ADAM);
  if (net)
    model = nl_model_new_full (net, &sample, &(NlModelOptions) { .seed = 1, .optim = &cfg }, &error);
  if (!model)
    {
      fprintf (stderr, "fuzz-checkpoint: the small model: %s\n", error->message);
      abort ();
    }
  return model;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  nl_fuzz_init ();
  g_autoptr (GError) error = NULL;
  g_autoptr (GBytes) bytes = g_bytes_new (data, size);
  g_autoptr (NlSafetensors) st = nl_safetensors_parse (bytes, &error);
  if (st)
    {
      /* every tensor's bytes are inside the file and as long as its shape says */
      gsize file_size;
      const guint8 *base = g_bytes_get_data (nl_safetensors_get_bytes (st), &file_size);
      volatile guint8 sum = 0;
      for (int i = 0; i < nl_safetensors_n_tensors (st); i++)
        {
          const NlStTensor *t = nl_safetensors_tensor (st, i);
          if (t->end - t->begin != (size_t) t->numel * nl_st_dtype_size (t->dtype) || t->data < base
              || t->data + (t->end - t->begin) > base + file_size || nl_safetensors_find (st, t->name) != t)
            {
              fprintf (stderr, "fuzz-checkpoint: tensor '%s' is inconsistent\n", t->name);
              abort ();
            }
          for (size_t b = 0; b < t->end - t->begin; b++)
            sum += t->data[b];
          g_free (nl_st_format_shape (t->ndim, t->shape));
        }
      (void) sum;  /* read so every tensor byte is touched, never looked at */
      nl_safetensors_metadata (st, "format");
    }

  NlModel *model = small_model ();
  NlTrainPosition pos = { 0 };
  g_clear_error (&error);
  if (nl_checkpoint_load (model, bytes, TRUE, &pos, &error))
    nl_train_position_clear (&pos);
  g_clear_error (&error);
  nl_checkpoint_load (model, bytes, FALSE, NULL, &error);

  /* weights files are read from a path */
  g_autofree char *path = nl_fuzz_write ("weights.safetensors", data, size);
  g_autoptr (GPtrArray) missing = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) extra = g_ptr_array_new_with_free_func (g_free);
  g_clear_error (&error);
  nl_weights_import (model, path, TRUE, TRUE, missing, extra, &error);
  g_unlink (path);
  return 0;
}
