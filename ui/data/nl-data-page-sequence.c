/* nl-data-page-sequence.c — the Data page's parts for sequence kinds: the
 * text options (text column, tokenizer, vocabulary size, minimum count,
 * maximum length) and the series options (target, window, horizon) in the
 * form, shown for the kinds whose table row reads them; and in place of the
 * image tiles, a text preview (tokens with <unk> marked, the length
 * histogram with the truncation point, the most frequent tokens, the
 * truncated count) or a series plot with the window and horizon. */
#include "ui/data/nl-data-page-private.h"
#include <glib/gi18n.h>
#include "ui/data/nl-sequence-plot.h"

#include <string.h>

#define SAMPLES_SHOWN 8
#define DEFAULT_VOCAB 20000
#define DEFAULT_MAX_LENGTH 128
#define DEFAULT_WINDOW 32

static void
option_changed (NlDataPage *page)
{
  _nl_data_page_set_dirty (page);
  if (!page->filling)
    _nl_data_page_schedule_reload (page, FALSE);
}

void
_nl_data_page_sequence_init (NlDataPage *page)
{
  GObject *changed[] = { G_OBJECT (page->text_column_row), G_OBJECT (page->target_row) };
  GObject *spins[] = { G_OBJECT (page->vocab_size_spin), G_OBJECT (page->min_count_spin),
                       G_OBJECT (page->max_length_spin), G_OBJECT (page->window_spin),
                       G_OBJECT (page->horizon_spin) };
  for (guint i = 0; i < G_N_ELEMENTS (changed); i++)
    g_signal_connect_swapped (changed[i], "changed", G_CALLBACK (option_changed), page);
  for (guint i = 0; i < G_N_ELEMENTS (spins); i++)
    g_signal_connect_swapped (spins[i], "value-changed", G_CALLBACK (option_changed), page);
  g_signal_connect_swapped (page->tokenizer_row, "notify::selected", G_CALLBACK (option_changed), page);
}

void
_nl_data_page_sequence_update_rows (NlDataPage *page, const NlDatasetKind *kind)
{
  gboolean text = (kind->uses & NL_DATASET_USES_TEXT) != 0;
  gtk_widget_set_visible (page->text_group, text);
  gtk_widget_set_visible (GTK_WIDGET (page->text_column_row), (kind->uses & NL_DATASET_USES_TEXT_COLUMN) != 0);
  gtk_widget_set_visible (page->series_group, (kind->uses & NL_DATASET_USES_SERIES) != 0);
  if (kind->uses & NL_DATASET_USES_TEXT_COLUMN)
    adw_preferences_row_set_title (ADW_PREFERENCES_ROW (page->label_column_row), _("Label column (default: label)"));
  else
    adw_preferences_row_set_title (ADW_PREFERENCES_ROW (page->label_column_row),
                                   _("Label column (default: the last)"));
}

static void
set_spin (GtkSpinButton *spin, int value, int fallback)
{
  gtk_spin_button_set_value (spin, value > 0 ? value : fallback);
}

/* 0 (the kind's default) when the field shows the default, so that an
 * untouched form writes back what the project had */
static int
get_spin (GtkSpinButton *spin, int fallback)
{
  int v = gtk_spin_button_get_value_as_int (spin);
  return v == fallback ? 0 : v;
}

static char *
entry_text (AdwEntryRow *row)
{
  const char *t = gtk_editable_get_text (GTK_EDITABLE (row));
  return *t ? g_strstrip (g_strdup (t)) : NULL;
}

void
_nl_data_page_sequence_fill (NlDataPage *page, const NlPipelineExtra *x)
{
  gtk_editable_set_text (GTK_EDITABLE (page->text_column_row), x->text_column ? x->text_column : "");
  adw_combo_row_set_selected (page->tokenizer_row, x->tokenizer == NL_TOKENIZER_CHAR ? 1 : 0);
  set_spin (page->vocab_size_spin, x->vocab_size, DEFAULT_VOCAB);
  set_spin (page->min_count_spin, x->min_count, 1);
  set_spin (page->max_length_spin, x->max_length, DEFAULT_MAX_LENGTH);
  gtk_editable_set_text (GTK_EDITABLE (page->target_row), x->target_column ? x->target_column : "");
  set_spin (page->window_spin, x->window, DEFAULT_WINDOW);
  set_spin (page->horizon_spin, x->horizon, 1);
}

void
_nl_data_page_sequence_read (NlDataPage *page, NlPipelineExtra *x)
{
  g_free (x->text_column);
  x->text_column = entry_text (page->text_column_row);
  x->tokenizer = adw_combo_row_get_selected (page->tokenizer_row) == 1 ? NL_TOKENIZER_CHAR : NL_TOKENIZER_WORD;
  x->vocab_size = get_spin (page->vocab_size_spin, DEFAULT_VOCAB);
  x->min_count = get_spin (page->min_count_spin, 1);
  x->max_length = get_spin (page->max_length_spin, DEFAULT_MAX_LENGTH);
  g_free (x->target_column);
  x->target_column = entry_text (page->target_row);
  x->window = get_spin (page->window_spin, DEFAULT_WINDOW);
  x->horizon = get_spin (page->horizon_spin, 1);
}

/* ---- the preview ---- */

void
_nl_data_page_sequence_clear (NlDataPage *page)
{
  GtkWidget *child;
  while ((child = gtk_widget_get_first_child (page->sequence_box)))
    gtk_box_remove (GTK_BOX (page->sequence_box), child);
  gtk_widget_set_visible (page->sequence_box, FALSE);
}

static GtkWidget *
add_label (NlDataPage *page, const char *name, const char *markup, const char *css)
{
  GtkWidget *l = gtk_label_new (NULL);
  gtk_label_set_markup (GTK_LABEL (l), markup);
  /* one line each, the rest in the tooltip: wrapped labels in the
   * scrolled preview were measured at another width than they got, and
   * the box below overlapped them */
  gtk_label_set_ellipsize (GTK_LABEL (l), PANGO_ELLIPSIZE_END);
  gtk_widget_set_tooltip_markup (l, markup);
  gtk_label_set_xalign (GTK_LABEL (l), 0);
  gtk_label_set_selectable (GTK_LABEL (l), TRUE);
  if (css)
    gtk_widget_add_css_class (l, css);
  if (name)
    gtk_widget_set_name (l, name);
  gtk_box_append (GTK_BOX (page->sequence_box), l);
  return l;
}

/* one sample: its tokens, the unknown ones marked as the model reads them */
static char *
sample_markup (const NlDataPreview *p, int i)
{
  const NlTextSamplePreview *s = &p->text->samples[i];
  const char *sep = p->text->tokenizer == NL_TOKENIZER_CHAR ? "" : " ";
  GString *m = g_string_new (NULL);
  if (!p->text->language_model)
    {
      g_autofree char *label = nl_data_preview_label_text (p, i);
      g_autofree char *esc = g_markup_escape_text (label ? label : "", -1);
      g_string_append_printf (m, "<b>%s</b>  ", esc);
    }
  for (int k = 0; k < s->n_tokens; k++)
    {
      g_autofree char *esc = g_markup_escape_text (s->tokens[k], -1);
      if (k)
        g_string_append (m, sep);
      if (s->unknown[k])
        g_string_append_printf (m, "<span underline=\"error\" foreground=\"#c01c28\">%s</span>", esc);
      else
        g_string_append (m, esc);
    }
  if (s->n_total > s->n_tokens)
    {
      g_autofree char *more = g_markup_printf_escaped (_("… %" G_GINT64_FORMAT " more tokens cut"),
                                                       s->n_total - s->n_tokens);
      g_string_append_printf (m, " <i>%s</i>", more);
    }
  return g_string_free (m, FALSE);
}

static void
show_text (NlDataPage *page, const NlDataPreview *p)
{
  const NlTextPreview *t = p->text;
  g_autofree char *tokens = nl_data_format_count (t->n_tokens), *unknown = nl_data_format_count (t->n_unknown);
  g_autofree char *cut = nl_data_format_count (t->n_truncated), *samples = nl_data_format_count (p->length);
  g_autofree char *summary = NULL, *cut_text = NULL;
  GString *top = g_string_new (NULL);
  GtkWidget *plot;

  cut_text = g_strdup_printf (ngettext ("%s sample longer than %d tokens is cut", "%s samples longer than %d tokens are cut",
                                        (gulong) t->n_truncated),
                              cut, t->max_length);
  summary = g_markup_printf_escaped (_("<b>%s</b> · %s samples · %s tokens, %s of them &lt;unk&gt; · vocabulary of %d "
                                       "(%s tokenizer)"),
                                     cut_text, samples, tokens, unknown, t->vocab_size,
                                     t->tokenizer == NL_TOKENIZER_CHAR ? "char" : "word");
  add_label (page, "text-summary", summary, NULL);
  if (t->n_truncated_rows || t->n_skipped_rows)
    {
      g_autofree char *rows = g_markup_printf_escaped (_("%" G_GINT64_FORMAT " rows over 1 MB cut at 1 MB · %"
                                                         G_GINT64_FORMAT " rows without a token left out"),
                                                       t->n_truncated_rows, t->n_skipped_rows);
      add_label (page, "text-rows", rows, "warning");
    }
  add_label (page, NULL, _("<b>Lengths</b> (tokens per sample; the red line is where samples are cut)"), NULL);
  plot = nl_sequence_plot_new ();
  gtk_widget_set_name (plot, "length-histogram");
  nl_sequence_plot_set_lengths (NL_SEQUENCE_PLOT (plot), t->bins, t->n_bins, t->bin_width, t->max_length);
  gtk_box_append (GTK_BOX (page->sequence_box), plot);
  for (int k = 0; k < t->n_top; k++)
    {
      g_autofree char *count = nl_data_format_count (t->top[k].count);
      g_autofree char *item = g_markup_printf_escaped ("%s<tt>%s</tt> %s", k ? "  ·  " : "", t->top[k].token, count);
      g_string_append (top, item);
    }
  add_label (page, NULL, _("<b>Most frequent tokens</b>"), NULL);
  add_label (page, "top-tokens", top->str, NULL);
  g_string_free (top, TRUE);
  add_label (page, NULL, _("<b>Samples</b> (<span underline=\"error\" foreground=\"#c01c28\">marked</span> tokens "
                           "read as &lt;unk&gt;)"),
             NULL);
  for (int i = 0; t->samples && i < p->n_samples && i < SAMPLES_SHOWN; i++)
    {
      g_autofree char *m = sample_markup (p, i);
      GtkWidget *l = add_label (page, NULL, m, "nl-text-sample");
      gtk_widget_set_name (l, "text-sample");
    }
}

static void
show_series (NlDataPage *page, const NlDataPreview *p)
{
  const NlSeriesPreview *s = p->series;
  g_autofree char *rows = nl_data_format_count (s->n_rows);
  g_autofree char *summary = g_markup_printf_escaped (
    _("<b>%s</b> over %s rows · each sample reads %d rows of %d columns and predicts the next %d values · "
      "mean %.4g, std %.4g on the training rows"),
    s->target ? s->target : "", rows, s->window, s->n_columns, s->horizon, s->target_mean, s->target_std);
  GtkWidget *plot = nl_sequence_plot_new ();

  add_label (page, "series-summary", summary, NULL);
  gtk_widget_set_name (plot, "series-plot");
  gtk_widget_set_size_request (plot, -1, 240);
  nl_sequence_plot_set_series (NL_SEQUENCE_PLOT (plot), s->values, s->n_values, s->stride, s->n_rows,
                               s->val_start_row, s->window, s->horizon);
  gtk_box_append (GTK_BOX (page->sequence_box), plot);
}

gboolean
_nl_data_page_sequence_show (NlDataPage *page, const NlDataPreview *p)
{
  _nl_data_page_sequence_clear (page);
  if (p->text)
    show_text (page, p);
  else if (p->series)
    show_series (page, p);
  else
    return FALSE;
  gtk_widget_set_visible (page->sequence_box, TRUE);
  return TRUE;
}

GtkWidget *
nl_data_page_get_part (NlDataPage *page, const char *part)
{
  g_return_val_if_fail (NL_IS_DATA_PAGE (page), NULL);
  for (GtkWidget *w = gtk_widget_get_first_child (page->sequence_box); w; w = gtk_widget_get_next_sibling (w))
    if (g_strcmp0 (gtk_widget_get_name (w), part) == 0)
      return w;
  if (g_str_equal (part, "text-group"))
    return page->text_group;
  if (g_str_equal (part, "series-group"))
    return page->series_group;
  if (g_str_equal (part, "max-length"))
    return GTK_WIDGET (page->max_length_spin);
  if (g_str_equal (part, "text-column"))
    return GTK_WIDGET (page->text_column_row);
  if (g_str_equal (part, "source"))
    return GTK_WIDGET (page->source_row);
  return NULL;
}
