/* nl-optim.c — optimizer names, defaults, and the CPU update of one
 * weight's tensors through the CPU backend (core/nl-backend-cpu-optim.c). */
#include "engine/train/nl-optim.h"

#include <math.h>
#include <string.h>

#include "core/nl-backend.h"

G_DEFINE_QUARK (nl-optim-error-quark, nl_optim_error)

static const char *const kind_names[NL_OPTIM_COUNT] = {
  [NL_OPTIM_SGD] = "sgd",
  [NL_OPTIM_NAG] = "nag",
  [NL_OPTIM_ADAM] = "adam",
  [NL_OPTIM_ADAMW] = "adamw",
  [NL_OPTIM_RMSPROP] = "rmsprop",
  [NL_OPTIM_ADAGRAD] = "adagrad",
};

void
nl_optim_config_init (NlOptimConfig *c, NlOptimKind kind)
{
  memset (c, 0, sizeof *c);
  c->kind = kind;
  c->lr = 0.01f;
  c->beta1 = 0.9f;
  c->beta2 = 0.999f;
  c->epsilon = 1e-8f;
  c->rho = 0.9f;
  switch (kind)
    {
    case NL_OPTIM_SGD:
      break;
    case NL_OPTIM_NAG:
      c->momentum = 0.9f;
      c->nesterov = TRUE;
      break;
    case NL_OPTIM_ADAMW:
      c->wd = 0.01f;
      /* fall through */
    case NL_OPTIM_ADAM:
      c->lr = 0.001f;
      break;
    case NL_OPTIM_RMSPROP:
      c->lr = 0.001f;
      c->momentum = 0.9f;
      c->epsilon = 1e-7f;
      break;
    case NL_OPTIM_ADAGRAD:
      c->lr = 0.1f;
      c->epsilon = 1e-7f;
      break;
    case NL_OPTIM_COUNT:
    default:
      g_return_if_reached ();
    }
}

gboolean
nl_optim_kind_parse (const char *name, NlOptimKind *kind, GError **error)
{
  for (int i = 0; i < NL_OPTIM_COUNT; i++)
    if (name && g_ascii_strcasecmp (name, kind_names[i]) == 0)
      {
        *kind = (NlOptimKind) i;
        return TRUE;
      }
  g_autofree char *valid = g_strjoinv (", ", (char **) kind_names);
  g_set_error (error, NL_OPTIM_ERROR, NL_OPTIM_ERROR_INVALID,
               "unknown optimizer '%s' (valid: %s)", name ? name : "(null)", valid);
  return FALSE;
}

const char *
nl_optim_kind_name (NlOptimKind kind)
{
  g_return_val_if_fail ((unsigned) kind < NL_OPTIM_COUNT, "?");
  return kind_names[kind];
}

static gboolean
usable (const NlTensor *t, int64_t n)
{
  return t && t->dtype == NL_DTYPE_F32 && nl_device_is_host (t->storage->device)
         && nl_tensor_is_contiguous (t) && nl_tensor_numel (t) == n;
}

void
nl_optim_update (const NlOptimConfig *c, float lr, int64_t t, float grad_scale,
                 NlTensor *weight, const NlTensor *grad, NlTensor *const *state)
{
  float *states[3] = { NULL, NULL, NULL };
  int64_t n;
  int n_states;

  g_return_if_fail (c != NULL && weight != NULL);
  n = nl_tensor_numel (weight);
  g_return_if_fail (usable (weight, n) && usable (grad, n));
  g_return_if_fail (t >= 1);
  g_return_if_fail ((unsigned) c->kind < NL_OPTIM_COUNT);
  n_states = nl_optim_n_states (c);
  g_return_if_fail (n_states == 0 || state != NULL);
  for (int i = 0; i < n_states; i++)
    {
      g_return_if_fail (usable (state[i], n));
      states[i] = nl_tensor_f32 (state[i]);
    }
  nl_backend_optim_update (nl_backend_cpu (), c, lr, t, grad_scale, nl_tensor_f32 (weight), nl_tensor_f32 (grad),
                           states, n, NULL);
}

double
nl_optim_global_norm (NlTensor *const *grads, int n)
{
  g_autofree const float **x = g_new0 (const float *, MAX (n, 1));
  g_autofree int64_t *len = g_new0 (int64_t, MAX (n, 1));
  double total = 0;

  for (int k = 0; k < n; k++)
    if (grads[k])
      {
        len[k] = nl_tensor_numel (grads[k]);
        g_return_val_if_fail (usable (grads[k], len[k]), NAN);
        x[k] = nl_tensor_f32 (grads[k]);
      }
  nl_backend_sum_squares (nl_backend_cpu (), x, len, n, &total, NULL);
  return sqrt (total);
}
