/* nl-op-instance.c — run one op outside a graph. */
#include "ops/nl-op-instance.h"
#include "ops/nl-op-registry.h"

static NlTensor *
alloc_or_null (const NlShape *s)
{
  return s->ndim < 0 ? NULL : nl_tensor_zeros (NL_DTYPE_F32, s);
}

NlOpInstance *
nl_op_instance_new (const NlOpDef *def, const char *const *params,
                    int n_data, const NlShape *in_shapes,
                    gboolean training, GError **error)
{
  NlOpInstance *inst = g_new0 (NlOpInstance, 1);
  NlShape wshape[8], ashape[8], sshape[8], oshape[4];
  NlInferCtx ic;

  g_return_val_if_fail (def->n_weights <= 8 && def->n_aux <= 8 && def->n_saved <= 8 && def->n_outputs <= 4, NULL);
  inst->def = def;
  inst->training = training;
  inst->n_data = n_data;
  inst->n_in = n_data + def->n_weights;
  inst->p = g_new0 (NlParamValue, MAX (def->n_params, 1));
  inst->seed = 42;
  nl_params_init_defaults (def, inst->p);
  for (int i = 0; params && params[i]; i += 2)
    if (!nl_params_set_from_string (def, inst->p, params[i], params[i + 1], error))
      goto fail;
  if (!nl_params_validate (def, inst->p, error))
    goto fail;
  inst->args = nl_op_args_new (def, inst->p);
  inst->kernels = nl_op_kernels (def, nl_backend_cpu ());

  for (int i = 0; i < 8; i++)
    wshape[i] = ashape[i] = sshape[i] = NL_SHAPE_ABSENT;
  ic = (NlInferCtx) { .p = inst->p, .training = training, .n_data = n_data, .in = in_shapes,
                      .weights = wshape, .aux = ashape, .saved = sshape, .out = oshape };
  if (!nl_op_infer_shape (def, &ic, error))
    goto fail;

  inst->in = g_new0 (NlTensor *, inst->n_in);
  inst->in_grad = g_new0 (NlTensor *, inst->n_in);
  for (int i = 0; i < n_data; i++)
    {
      inst->in[i] = alloc_or_null (&in_shapes[i]);
      if (!def->no_grad_inputs && !(def->is_loss && i == 1))
        inst->in_grad[i] = alloc_or_null (&in_shapes[i]);
    }
  for (int i = 0; i < def->n_weights; i++)
    {
      inst->in[n_data + i] = alloc_or_null (&wshape[i]);
      inst->in_grad[n_data + i] = alloc_or_null (&wshape[i]);
    }
  inst->aux = g_new0 (NlTensor *, MAX (def->n_aux, 1));
  for (int i = 0; i < def->n_aux; i++)
    inst->aux[i] = alloc_or_null (&ashape[i]);
  if (def->init_aux)
    def->init_aux (inst->aux, inst->p);
  inst->saved = g_new0 (NlTensor *, MAX (def->n_saved, 1));
  for (int i = 0; i < def->n_saved; i++)
    inst->saved[i] = alloc_or_null (&sshape[i]);
  inst->out = g_new0 (NlTensor *, def->n_outputs);
  inst->out_grad = g_new0 (NlTensor *, def->n_outputs);
  for (int i = 0; i < def->n_outputs; i++)
    {
      inst->out[i] = alloc_or_null (&oshape[i]);
      inst->out_grad[i] = alloc_or_null (&oshape[i]);
    }
  return inst;

fail:
  nl_op_instance_free (inst);
  return NULL;
}

static void
unref_array (NlTensor **a, int n)
{
  if (!a)
    return;
  for (int i = 0; i < n; i++)
    nl_tensor_unref (a[i]);
  g_free (a);
}

void
nl_op_instance_free (NlOpInstance *inst)
{
  if (!inst)
    return;
  if (inst->state && inst->kernels.free_state)
    inst->kernels.free_state (inst->state);
  unref_array (inst->in, inst->n_in);
  unref_array (inst->in_grad, inst->n_in);
  unref_array (inst->aux, inst->def->n_aux);
  unref_array (inst->saved, inst->def->n_saved);
  unref_array (inst->out, inst->def->n_outputs);
  unref_array (inst->out_grad, inst->def->n_outputs);
  g_clear_pointer (&inst->lengths, nl_tensor_unref);
  g_free (inst->args);
  g_free (inst->p);
  g_free (inst);
}

static NlOpCtx
make_ctx (NlOpInstance *inst)
{
  return (NlOpCtx) { .def = inst->def, .p = inst->p, .args = inst->args, .n_data = inst->n_data,
                     .in = inst->in, .out = inst->out, .aux = inst->aux, .saved = inst->saved,
                     .out_grad = inst->out_grad, .in_grad = inst->in_grad,
                     .training = inst->training, .seed = inst->seed, .step = inst->step,
                     .state = &inst->state, .backend = nl_backend_cpu (),
                     .lengths = inst->def->uses_lengths ? inst->lengths : NULL,
                     .host_lengths = inst->def->uses_lengths && inst->lengths
                                       ? nl_tensor_f32 (inst->lengths) : NULL };
}

gboolean
nl_op_instance_forward (NlOpInstance *inst, GError **error)
{
  NlOpCtx ctx = make_ctx (inst);
  g_return_val_if_fail (inst->kernels.forward != NULL, FALSE);
  return inst->kernels.forward (&ctx, error);
}

gboolean
nl_op_instance_backward (NlOpInstance *inst, GError **error)
{
  NlOpCtx ctx = make_ctx (inst);
  g_return_val_if_fail (inst->kernels.backward != NULL, FALSE);
  return inst->kernels.backward (&ctx, error);
}
