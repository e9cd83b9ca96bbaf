/* nl-sweep-asha.c — the rungs of asynchronous successive halving. */
#include "engine/sweep/nl-sweep-asha.h"
#include "engine/train/nl-run-config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct NlAsha {
  int eta, min_epochs, max_epochs;
  gboolean maximize;
  GPtrArray *rungs;          /* GArray of double per rung */
};

gboolean
nl_asha_parse (const char *spec, int *eta, int *min_epochs, GError **error)
{
  g_auto (GStrv) items = NULL;

  *eta = 3;
  *min_epochs = 1;
  if (!g_str_has_prefix (spec, "asha") || (spec[4] != '\0' && spec[4] != ':'))
    {
      g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG,
                   "--prune must be asha[:eta=3,min_epochs=1], not '%s'", spec);
      return FALSE;
    }
  if (spec[4] == '\0')
    return TRUE;
  items = g_strsplit (spec + 5, ",", -1);
  for (int i = 0; items[i]; i++)
    {
      char *end = NULL, *eq = strchr (items[i], '=');
      gint64 v = eq ? g_ascii_strtoll (eq + 1, &end, 10) : 0;
      gboolean number = eq && end != eq + 1 && *end == '\0';
      if (eq && !strncmp (items[i], "eta=", 4) && number && v >= 2 && v <= 100)
        *eta = (int) v;
      else if (eq && !strncmp (items[i], "min_epochs=", 11) && number && v >= 1 && v <= 1000000)
        *min_epochs = (int) v;
      else
        {
          g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG,
                       "--prune: '%s' is not eta=N (2 to 100) or min_epochs=N (at least 1)", items[i]);
          return FALSE;
        }
    }
  return TRUE;
}

NlAsha *
nl_asha_new (int eta, int min_epochs, int max_epochs, gboolean maximize)
{
  NlAsha *a = g_new0 (NlAsha, 1);
  g_return_val_if_fail (eta >= 2 && min_epochs >= 1, NULL);
  a->eta = eta;
  a->min_epochs = min_epochs;
  a->max_epochs = max_epochs;
  a->maximize = maximize;
  a->rungs = g_ptr_array_new_with_free_func ((GDestroyNotify) g_array_unref);
  return a;
}

void
nl_asha_free (NlAsha *a)
{
  if (!a)
    return;
  g_ptr_array_unref (a->rungs);
  g_free (a);
}

int
nl_asha_rung (const NlAsha *a, int epoch)
{
  gint64 milestone = a->min_epochs;
  for (int k = 0; milestone < a->max_epochs; k++, milestone *= a->eta)
    if (milestone == epoch)
      return k;
  return -1;
}

static GArray *
rung_values (NlAsha *a, int rung)
{
  while ((int) a->rungs->len <= rung)
    g_ptr_array_add (a->rungs, g_array_new (FALSE, FALSE, sizeof (double)));
  return g_ptr_array_index (a->rungs, rung);
}

void
nl_asha_record (NlAsha *a, int rung, double value)
{
  g_return_if_fail (rung >= 0);
  g_array_append_val (rung_values (a, rung), value);
}

static int
compare_doubles (gconstpointer a, gconstpointer b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

gboolean
nl_asha_promotable (const NlAsha *a, int rung, double value)
{
  GArray *all = rung < (int) a->rungs->len ? g_ptr_array_index (a->rungs, rung) : NULL;
  g_autoptr (GArray) sorted = g_array_new (FALSE, FALSE, sizeof (double));
  int k;

  if (isnan (value))
    return FALSE;
  /* NaN competitors (none are recorded by sweeps, but a caller may) never count as better */
  for (guint i = 0; all && i < all->len; i++)
    if (!isnan (g_array_index (all, double, i)))
      g_array_append_val (sorted, g_array_index (all, double, i));
  if (sorted->len == 0)
    return TRUE;
  g_array_sort (sorted, compare_doubles);
  /* the (k+1)-th best, k = n / eta - 1, or the best while n < eta */
  k = MAX ((int) sorted->len / a->eta - 1, 0);
  if (a->maximize)
    return value >= g_array_index (sorted, double, sorted->len - 1 - k);
  return value <= g_array_index (sorted, double, k);
}

gboolean
nl_asha_report (NlAsha *a, int epoch, double value)
{
  int rung = nl_asha_rung (a, epoch);
  if (rung < 0)
    return FALSE;
  if (isnan (value))
    return TRUE;
  nl_asha_record (a, rung, value);
  return !nl_asha_promotable (a, rung, value);
}
