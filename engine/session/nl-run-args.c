/* nl-run-args.c — run settings as `netloom-cli train` options. */
#include "engine/session/nl-run-args.h"
#include "core/nl-device.h"

static void
add (GPtrArray *a, const char *option, const char *value)
{
  g_ptr_array_add (a, g_strdup (option));
  if (value)
    g_ptr_array_add (a, g_strdup (value));
}

static void
add_int (GPtrArray *a, const char *option, gint64 v)
{
  g_ptr_array_add (a, g_strdup (option));
  g_ptr_array_add (a, g_strdup_printf ("%" G_GINT64_FORMAT, v));
}

/* %.9g gives a float back bit for bit; the CLI reads a double and rounds
 * it to the same float. Doubles: the shortest text that reads back. */
static void
add_real (GPtrArray *a, const char *option, double v, gboolean single)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  if (single)
    g_ascii_formatd (buf, sizeof buf, "%.9g", v);
  else
    g_ascii_dtostr (buf, sizeof buf, v);
  add (a, option, buf);
}

static gboolean
refuse (GError **error, const char *field, const char *why)
{
  g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG, "%s: %s (netloom-cli train has no option for it)",
               field, why);
  return FALSE;
}

/* The optimizer's settings beyond rate, momentum and decay: stated when
 * they differ from the kind's defaults (the CLI starts from those). */
static gboolean
add_optim_extras (GPtrArray *a, const NlOptimConfig *o, GError **error)
{
  NlOptimConfig d;
  nl_optim_config_init (&d, o->kind);
  if (!o->nesterov != !d.nesterov)
    {
      if (!o->nesterov)
        return refuse (error, "nesterov", "off, where the optimizer turns it on");
      add (a, "--nesterov", NULL);
    }
  if (!o->centered != !d.centered)
    {
      if (!o->centered)
        return refuse (error, "centered", "off, where the optimizer turns it on");
      add (a, "--centered", NULL);
    }
  if (o->clip_gradient != d.clip_gradient)
    return refuse (error, "clip_gradient", "set");
  if (o->beta1 != d.beta1)
    add_real (a, "--beta1", o->beta1, TRUE);
  if (o->beta2 != d.beta2)
    add_real (a, "--beta2", o->beta2, TRUE);
  if (o->epsilon != d.epsilon)
    add_real (a, "--epsilon", o->epsilon, TRUE);
  if (o->rho != d.rho)
    add_real (a, "--rho", o->rho, TRUE);
  return TRUE;
}

/* The text and series options, where they differ from the defaults (a
 * run of another kind never sets them). */
static void
add_sequence_data (GPtrArray *a, const NlDatasetOptions *d, const NlDatasetOptions *def)
{
  if (d->text_column)
    add (a, "--text-column", d->text_column);
  if (d->tokenizer != def->tokenizer)
    add (a, "--tokenizer", d->tokenizer == NL_TOKENIZER_CHAR ? "char" : "word");
  if (d->vocab_size != def->vocab_size)
    add_int (a, "--vocab-size", d->vocab_size);
  if (d->min_count != def->min_count)
    add_int (a, "--min-count", d->min_count);
  if (d->max_length != def->max_length)
    add_int (a, "--max-length", d->max_length);
  if (d->target_column)
    add (a, "--target", d->target_column);
  if (d->window != def->window)
    add_int (a, "--window", d->window);
  if (d->horizon != def->horizon)
    add_int (a, "--horizon", d->horizon);
}

char **
nl_run_config_to_cli_args (const NlRunConfig *rc, GError **error)
{
  g_autoptr (GPtrArray) a = g_ptr_array_new_with_free_func (g_free);
  g_auto (NlRunConfig) defaults = { 0 };
  g_autofree char *device = NULL;

  g_return_val_if_fail (rc != NULL, NULL);
  if (!nl_run_config_check (rc, error))
    return NULL;
  nl_run_config_init (&defaults);
  if (rc->eval_batch_size != defaults.eval_batch_size)
    {
      refuse (error, "eval_batch_size", "not the default");
      return NULL;
    }
  if ((rc->data.image_width > 0) != (rc->data.image_height > 0))
    {
      refuse (error, "image_width and image_height", "one set without the other");
      return NULL;
    }

  /* data: the dataset first (the CLI derives the normalisation from it),
   * then the normalisation as the settings have it */
  add (a, "--dataset", rc->dataset);
  if (rc->val_dataset)
    add (a, "--val-dataset", rc->val_dataset);
  if (rc->data.label_column)
    add (a, "--label-column", rc->data.label_column);
  if (rc->data.regression)
    add (a, "--regression", NULL);
  if (rc->data.image_width > 0)
    {
      g_ptr_array_add (a, g_strdup ("--image-size"));
      g_ptr_array_add (a, g_strdup_printf ("%dx%d", rc->data.image_width, rc->data.image_height));
    }
  add_real (a, "--val-fraction", rc->data.val_fraction, FALSE);
  add_sequence_data (a, &rc->data, &defaults.data);
  if (rc->augment)
    add (a, "--augment", rc->augment);
  add_real (a, "--mean", rc->mean, TRUE);
  add_real (a, "--std", rc->std, TRUE);
  add_int (a, "--batch-size", rc->batch_size);
  add_int (a, "--workers", rc->workers);
  add_int (a, "--scheduler-workers", rc->scheduler_workers);
  if (rc->preload)
    add (a, "--preload", NULL);
  add (a, "--loss", rc->loss);

  /* optimization */
  add_int (a, "--epochs", rc->epochs);
  add (a, "--optimizer", nl_optim_kind_name (rc->optim.kind));
  add_real (a, "--lr", rc->optim.lr, TRUE);
  add_real (a, "--momentum", rc->optim.momentum, TRUE);
  add_real (a, "--wd", rc->optim.wd, TRUE);
  add_real (a, "--clip-norm", rc->optim.clip_global_norm, TRUE);
  if (!add_optim_extras (a, &rc->optim, error))
    return NULL;
  if (rc->lr_schedule)
    add (a, "--lr-schedule", rc->lr_schedule);
  /* a seed above 2^63 reads back through the CLI's int64 unchanged */
  add_int (a, "--seed", (gint64) rc->seed);
  add_int (a, "--threads", rc->threads);
  device = nl_device_to_string (rc->device);
  add (a, "--device", device);
  add (a, "--precision", nl_precision_name (rc->precision));
  if (rc->loss_scale > 0)  /* 0: the default scale, which the CLI cannot be told */
    add_real (a, "--loss-scale", rc->loss_scale, TRUE);
  add (a, "--cudnn-autotune", rc->cudnn_autotune ? "on" : "off");
  add (a, "--cuda-graphs", rc->cuda_graphs ? "on" : "off");
  if (rc->deterministic)
    add (a, "--deterministic", NULL);

  /* the stored run's checkpoint policy and early stopping */
  add_int (a, "--keep-checkpoints", rc->keep_last);
  if (rc->monitor)
    add (a, "--checkpoint-metric", rc->monitor);
  if (rc->restore_best)
    add (a, "--restore-best", NULL);
  if (rc->early_stop_metric)
    add (a, "--early-stop", rc->early_stop_metric);
  add_int (a, "--patience", rc->patience);
  add_real (a, "--min-delta", rc->min_delta, FALSE);

  g_ptr_array_add (a, NULL);
  return (char **) g_ptr_array_steal (a, NULL);
}
