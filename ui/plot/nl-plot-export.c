/* nl-plot-export.c — the plot as PNG and SVG (the drawing code of the
 * widget on an image or SVG surface) and every raw point as CSV. */
#include "ui/plot/nl-plot-private.h"
#include <glib/gi18n.h>
#include "core/nl-atomic-file.h"
#include "ui/widgets/nl-cairo-bytes.h"

#include <cairo-svg.h>
#include <string.h>
#include <math.h>

static gboolean
check_size (int width, int height, GError **error)
{
  if (width <= 0 || height <= 0 || width > 32767 || height > 32767)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   _("plot export size %dx%d is out of range (1..32767)"), width, height);
      return FALSE;
    }
  return TRUE;
}

static gboolean
cairo_failed (cairo_status_t status, const char *path, GError **error)
{
  if (status == CAIRO_STATUS_SUCCESS)
    return FALSE;
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, _("cannot write the plot to %s: %s"), path,
               cairo_status_to_string (status));
  return TRUE;
}

/* cairo wrote the image into memory; the file is written whole or not at all */
static gboolean
write_image (GByteArray *bytes, cairo_status_t status, const char *path, GError **error)
{
  if (cairo_failed (status, path, error))
    return FALSE;
  if (!nl_atomic_file_set_contents (path, bytes->data, bytes->len, error))
    {
      g_prefix_error (error, _("cannot write the plot: "));
      return FALSE;
    }
  return TRUE;
}

gboolean
nl_plot_export_png (NlPlot *plot, const char *path, int width, int height, GError **error)
{
  cairo_surface_t *surface;
  cairo_t *cr;
  cairo_status_t status;
  g_autoptr (GByteArray) bytes = g_byte_array_new ();

  g_return_val_if_fail (NL_IS_PLOT (plot), FALSE);
  g_return_val_if_fail (path != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);
  if (!check_size (width, height, error))
    return FALSE;
  surface = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, width, height);
  cr = cairo_create (surface);
  nl_plot_draw (plot, cr, width, height, TRUE);
  status = cairo_status (cr);
  cairo_destroy (cr);
  if (status == CAIRO_STATUS_SUCCESS)
    status = cairo_surface_write_to_png_stream (surface, nl_cairo_append_bytes, bytes);
  cairo_surface_destroy (surface);
  return write_image (bytes, status, path, error);
}

gboolean
nl_plot_export_svg (NlPlot *plot, const char *path, int width, int height, GError **error)
{
  cairo_surface_t *surface;
  cairo_t *cr;
  cairo_status_t status;
  g_autoptr (GByteArray) bytes = g_byte_array_new ();

  g_return_val_if_fail (NL_IS_PLOT (plot), FALSE);
  g_return_val_if_fail (path != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);
  if (!check_size (width, height, error))
    return FALSE;
  surface = cairo_svg_surface_create_for_stream (nl_cairo_append_bytes, bytes, width, height);
  status = cairo_surface_status (surface);
  if (status == CAIRO_STATUS_SUCCESS)
    {
      cr = cairo_create (surface);
      nl_plot_draw (plot, cr, width, height, TRUE);
      status = cairo_status (cr);
      cairo_destroy (cr);
      /* the SVG is written on finish; its errors show only then */
      cairo_surface_finish (surface);
      if (status == CAIRO_STATUS_SUCCESS)
        status = cairo_surface_status (surface);
    }
  cairo_surface_destroy (surface);
  return write_image (bytes, status, path, error);
}

/* RFC 4180: quote a field holding a comma, quote or line break. */
static void
append_field (GString *out, const char *field)
{
  if (!strpbrk (field, ",\"\r\n"))
    {
      g_string_append (out, field);
      return;
    }
  g_string_append_c (out, '"');
  for (const char *p = field; *p; p++)
    {
      if (*p == '"')
        g_string_append_c (out, '"');
      g_string_append_c (out, *p);
    }
  g_string_append_c (out, '"');
}

gboolean
nl_plot_export_csv (NlPlot *plot, const char *path, GError **error)
{
  g_autoptr (GString) out = g_string_new ("series,x,y\n");
  char num[G_ASCII_DTOSTR_BUF_SIZE];

  g_return_val_if_fail (NL_IS_PLOT (plot), FALSE);
  g_return_val_if_fail (path != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);
  for (guint i = 0; i < plot->series->len; i++)
    {
      NlPlotSeries *s = g_ptr_array_index (plot->series, i);
      g_autoptr (GString) label = g_string_new (NULL);
      gsize n = nl_plot_series_get_length (s);
      append_field (label, nl_plot_series_get_label (s));
      for (gsize k = 0; k < n; k++)
        {
          double x, y;
          nl_plot_series_get_point (s, k, &x, &y);
          g_string_append_len (out, label->str, label->len);
          /* %.17g reads back to the same double; g_ascii_formatd ignores
           * the locale's decimal comma */
          g_string_append_c (out, ',');
          g_string_append (out, g_ascii_formatd (num, sizeof num, "%.17g", x));
          g_string_append_c (out, ',');
          g_string_append (out, g_ascii_formatd (num, sizeof num, "%.17g", y));
          g_string_append_c (out, '\n');
        }
    }
  if (!nl_atomic_file_set_contents (path, out->str, out->len, error))
    {
      g_prefix_error (error, _("cannot export the plot's points: "));
      return FALSE;
    }
  return TRUE;
}
