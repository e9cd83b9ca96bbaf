/* nl-event-log.c — a run's event log (nl-event-log.h). */
#include "ui/training/nl-event-log.h"
#include <glib/gi18n.h>

#include <string.h>

#define MAX_ROWS 1000

struct _NlEventLog {
  AdwBin parent_instance;

  /* template */
  GtkScrolledWindow *scroller;
  GtkListBox *list;

  guint n_rows;
  guint tick_id;      /* keeps the log scrolled to its end for a few frames */
  int tick_frames;
};

G_DEFINE_FINAL_TYPE (NlEventLog, nl_event_log, ADW_TYPE_BIN)

/* Rows appended in a frame are laid out after its tick: scroll to the end
 * on the next few ticks rather than when the adjustment changes (the
 * viewport reconfigures it more than once per layout). */
static gboolean
scroll_tick (GtkWidget *widget, GdkFrameClock *clock, gpointer data)
{
  NlEventLog *self = data;
  GtkAdjustment *adj = gtk_scrolled_window_get_vadjustment (self->scroller);
  gtk_adjustment_set_value (adj, gtk_adjustment_get_upper (adj) - gtk_adjustment_get_page_size (adj));
  if (++self->tick_frames < 3)
    return G_SOURCE_CONTINUE;
  self->tick_id = 0;
  return G_SOURCE_REMOVE;
}

static void
follow_end (NlEventLog *self)
{
  GtkAdjustment *adj = gtk_scrolled_window_get_vadjustment (self->scroller);
  gboolean at_end = gtk_adjustment_get_value (adj)
                    >= gtk_adjustment_get_upper (adj) - gtk_adjustment_get_page_size (adj) - 4;
  if (!self->tick_id && !at_end)
    return;  /* scrolled up to read: leave it there */
  self->tick_frames = 0;
  if (!self->tick_id)
    self->tick_id = gtk_widget_add_tick_callback (GTK_WIDGET (self->scroller), scroll_tick, self, NULL);
}

/* The kinds callers pass, listed for xgettext: the rows show them
 * translated, callers compare them as they are */
static const char *const kind_titles[] G_GNUC_UNUSED = {
  /* TRANSLATORS: kinds of lines in the training page's event log */
  N_("STATUS"), N_("ERROR"), N_("EPOCH"), N_("LOG"),
};

/* One wrapping label per row, time and kind in its markup: a wrapping
 * label beside other widgets in a GtkBox measures inconsistently in GTK
 * 4.8 (a critical, and rows that jump). */
void
nl_event_log_append (NlEventLog *self, const char *kind, const char *message)
{
  g_autoptr (GDateTime) now = g_date_time_new_now_local ();
  g_autofree char *time = g_date_time_format (now, "%H:%M:%S");
  g_autofree char *markup = g_markup_printf_escaped ("<span alpha=\"55%%\" font_features=\"tnum\">%s</span>   "
                                                     "<span weight=\"bold\" size=\"small\">%s</span>   %s", time, _(kind),
                                                     message ? message : "");
  GtkWidget *label;

  g_return_if_fail (NL_IS_EVENT_LOG (self));
  label = gtk_label_new (NULL);
  gtk_label_set_markup (GTK_LABEL (label), markup);
  gtk_label_set_xalign (GTK_LABEL (label), 0);
  gtk_label_set_wrap (GTK_LABEL (label), TRUE);
  gtk_label_set_wrap_mode (GTK_LABEL (label), PANGO_WRAP_WORD_CHAR);
  gtk_label_set_selectable (GTK_LABEL (label), TRUE);
  gtk_widget_set_margin_start (label, 8);
  gtk_widget_set_margin_end (label, 8);
  gtk_widget_set_margin_top (label, 2);
  gtk_widget_set_margin_bottom (label, 2);
  if (!strcmp (kind, "ERROR"))
    gtk_widget_add_css_class (label, "error");
  follow_end (self);
  gtk_list_box_append (self->list, label);
  if (++self->n_rows > MAX_ROWS)
    {
      gtk_list_box_remove (self->list, gtk_widget_get_first_child (GTK_WIDGET (self->list)));
      self->n_rows--;
    }
}

void
nl_event_log_clear (NlEventLog *self)
{
  GtkWidget *child;
  g_return_if_fail (NL_IS_EVENT_LOG (self));
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self->list))))
    gtk_list_box_remove (self->list, child);
  self->n_rows = 0;
}

guint
nl_event_log_get_n_rows (NlEventLog *self)
{
  g_return_val_if_fail (NL_IS_EVENT_LOG (self), 0);
  return self->n_rows;
}

static void
nl_event_log_dispose (GObject *object)
{
  NlEventLog *self = NL_EVENT_LOG (object);
  if (self->tick_id)
    gtk_widget_remove_tick_callback (GTK_WIDGET (self->scroller), self->tick_id);
  self->tick_id = 0;
  gtk_widget_dispose_template (GTK_WIDGET (self), NL_TYPE_EVENT_LOG);
  G_OBJECT_CLASS (nl_event_log_parent_class)->dispose (object);
}

static void
nl_event_log_class_init (NlEventLogClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  G_OBJECT_CLASS (klass)->dispose = nl_event_log_dispose;
  gtk_widget_class_set_template_from_resource (widget_class, "/io/github/netloom/Netloom/ui/nl-event-log.ui");
  gtk_widget_class_bind_template_child (widget_class, NlEventLog, scroller);
  gtk_widget_class_bind_template_child (widget_class, NlEventLog, list);
}

static void
nl_event_log_init (NlEventLog *self)
{
  GtkWidget *placeholder;

  gtk_widget_init_template (GTK_WIDGET (self));
  placeholder = gtk_label_new (_("What the run reports appears here: epochs, checkpoints, pauses, errors"));
  gtk_widget_add_css_class (placeholder, "dim-label");
  gtk_widget_set_margin_top (placeholder, 12);
  gtk_widget_set_margin_bottom (placeholder, 12);
  gtk_label_set_wrap (GTK_LABEL (placeholder), TRUE);
  gtk_list_box_set_placeholder (self->list, placeholder);
}
