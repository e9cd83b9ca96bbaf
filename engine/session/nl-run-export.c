/* nl-run-export.c — weights and metrics of a run out to files (see nl-run-export.h). */
#include "engine/session/nl-run-export.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/nl-atomic-file.h"
#include "engine/formats/nl-checkpoint.h"
#include "engine/session/nl-run-checkpoint.h"

gboolean
nl_run_export_weights (NlProject *p, gint64 run, const char *which, const char *path, gint64 *checkpoint,
                       int *epoch, GError **error)
{
  g_autoptr (GBytes) blob = NULL;
  gint64 ckpt;
  int ep = 0;

  g_return_val_if_fail (p != NULL && path != NULL, FALSE);
  if (which)
    ckpt = nl_run_checkpoint_find (p, run, which, &blob, &ep, NULL, error);
  else
    {
      /* a run without a best flag (no monitored metric) still has a last one */
      ckpt = nl_run_checkpoint_find (p, run, "best", &blob, &ep, NULL, NULL);
      if (ckpt <= 0)
        ckpt = nl_run_checkpoint_find (p, run, "last", &blob, &ep, NULL, error);
    }
  if (ckpt <= 0 || !nl_weights_export_from_checkpoint (blob, path, error))
    return FALSE;
  if (checkpoint)
    *checkpoint = ckpt;
  if (epoch)
    *epoch = ep;
  return TRUE;
}

char *
nl_csv_field (const char *text)
{
  GString *s;
  if (!text)
    return g_strdup ("");
  if (!strpbrk (text, ",\"\r\n"))
    return g_strdup (text);
  s = g_string_new ("\"");
  for (const char *c = text; *c; c++)
    {
      if (*c == '"')
        g_string_append_c (s, '"');
      g_string_append_c (s, *c);
    }
  g_string_append_c (s, '"');
  return g_string_free (s, FALSE);
}

static gboolean
write_failed (const char *path, int err, GError **error)
{
  g_set_error (error, G_IO_ERROR, g_io_error_from_errno (err), "could not write %s: %s", path, g_strerror (err));
  return FALSE;
}

static gboolean
write_runs (NlProject *p, FILE *f, const gint64 *runs, guint n_runs, gint64 *n_rows, GError **error)
{
  if (fputs ("run,step,epoch,split,name,value,wall\n", f) < 0)
    return FALSE;
  for (guint i = 0; i < n_runs; i++)
    {
      g_autoptr (NlRunInfo) info = nl_project_get_run (p, runs[i], error);
      g_autoptr (GArray) rows = NULL;
      g_autofree char *name = NULL;
      if (!info || !(rows = nl_project_get_metrics (p, runs[i], NULL, 0, NULL, error)))
        return FALSE;
      name = nl_csv_field (info->name);
      for (guint j = 0; j < rows->len; j++)
        {
          const NlMetricRow *m = &g_array_index (rows, NlMetricRow, j);
          char value[G_ASCII_DTOSTR_BUF_SIZE] = "", wall[G_ASCII_DTOSTR_BUF_SIZE];
          if (!isnan (m->value))
            g_ascii_dtostr (value, sizeof value, m->value);
          g_ascii_formatd (wall, sizeof wall, "%.3f", m->wall);
          if (fprintf (f, "%s,%" G_GINT64_FORMAT ",%d,%s,%s,%s,%s\n", name, m->step, m->epoch, m->split, m->name,
                       value, wall) < 0)
            return FALSE;
        }
      *n_rows += rows->len;
    }
  return TRUE;
}

gboolean
nl_run_export_metrics_csv (NlProject *p, const gint64 *runs, guint n_runs, const char *path, gint64 *n_rows,
                           GError **error)
{
  g_autoptr (NlAtomicFile) af = NULL;
  GError *local = NULL;
  gint64 count = 0;
  FILE *f;
  int fd, err = 0;
  gboolean ok;

  g_return_val_if_fail (p != NULL && path != NULL && (runs != NULL || n_runs == 0), FALSE);
  af = nl_atomic_file_open (path, error);
  if (!af)
    return FALSE;
  /* stdio on a second descriptor: fclose leaves the atomic file's own */
  fd = dup (nl_atomic_file_fd (af));
  f = fd >= 0 ? fdopen (fd, "w") : NULL;
  if (!f)
    {
      err = errno;
      if (fd >= 0)
        close (fd);
      return write_failed (path, err, error);
    }
  ok = write_runs (p, f, runs, n_runs, &count, &local);
  if (!ok && !local)
    err = errno;
  if (fclose (f) != 0 && ok)
    {
      ok = FALSE;
      err = errno;
    }
  if (!ok)
    {
      if (local)
        g_propagate_error (error, local);
      else
        write_failed (path, err ? err : EIO, error);
      return FALSE;
    }
  if (!nl_atomic_file_commit (g_steal_pointer (&af), error))
    return FALSE;
  if (n_rows)
    *n_rows = count;
  return TRUE;
}
