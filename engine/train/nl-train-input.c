/* nl-train-input.c — see nl-train-input.h. */
#include "engine/train/nl-train-input.h"
#include "engine/train/nl-trainer.h"

#include <string.h>

void
nl_train_input_clear (NlTrainInput *in)
{
  g_clear_pointer (&in->data, g_ptr_array_unref);
  g_clear_pointer (&in->labels, g_ptr_array_unref);
  g_clear_pointer (&in->counts, g_array_unref);
  in->next = 0;
}

gboolean
nl_train_input_preload (NlTrainInput *in, const NlShape *ds, const NlShape *ls, GError **error)
{
  int n;
  nl_train_input_clear (in);
  in->data = g_ptr_array_new_with_free_func ((GDestroyNotify) nl_tensor_unref);
  in->labels = g_ptr_array_new_with_free_func ((GDestroyNotify) nl_tensor_unref);
  in->counts = g_array_new (FALSE, FALSE, sizeof (int));
  for (;;)
    {
      NlTensor *d = nl_tensor_new_shape (NL_DTYPE_F32, ds), *l = nl_tensor_new_shape (NL_DTYPE_F32, ls);
      if (!d || !l)
        {
          g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG, "out of memory preloading an epoch");
          return FALSE;
        }
      g_ptr_array_add (in->data, d);
      g_ptr_array_add (in->labels, l);
      n = nl_loader_next (in->loader, d, l, error);
      if (n <= 0)
        return n == 0;
      g_array_append_val (in->counts, n);
    }
}

static int
next_untimed (NlTrainInput *in, NlTensor *data, NlTensor *labels, GError **error)
{
  int n;
  if (!in->data)
    return nl_loader_next (in->loader, data, labels, error);
  if (in->next >= in->counts->len)
    return 0;
  n = g_array_index (in->counts, int, in->next);
  memcpy (nl_tensor_f32 (data), nl_tensor_f32 (g_ptr_array_index (in->data, in->next)),
          nl_tensor_numel (data) * sizeof (float));
  memcpy (nl_tensor_f32 (labels), nl_tensor_f32 (g_ptr_array_index (in->labels, in->next)),
          nl_tensor_numel (labels) * sizeof (float));
  in->next++;
  return n;
}

int
nl_train_input_next (NlTrainInput *in, NlTensor *data, NlTensor *labels, GError **error)
{
  gint64 t0 = g_get_monotonic_time (), t1;
  int n = next_untimed (in, data, labels, error);
  if (n <= 0)
    return n;
  t1 = g_get_monotonic_time ();
  in->wait_us += t1 - t0;
  in->batches++;
  if (in->trace)
    nl_trace_add (in->trace, NL_TRACE_CAT_INPUT, "wait for batch", "batch", in->batches, t0, t1);
  return n;
}
