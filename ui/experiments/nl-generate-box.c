/* nl-generate-box.c — a language model's text, streamed from a worker
 * thread (see nl-generate-box.h). */
#include "ui/experiments/nl-generate-box.h"
#include <glib/gi18n.h>

#include "engine/session/nl-generate.h"

/* What the worker hands the main loop: the pieces sampled since the last
 * flush. Shared by the thread's callback and the idle that shows them. */
typedef struct {
  GMutex lock;
  GString *pending;
  int pending_n;
  gboolean idle_queued;
  NlGenerateBox *box;     /* a reference */
  guint generation;       /* the box's generation it belongs to */
} Stream;

struct _NlGenerateBox {
  AdwBin parent_instance;
  NlWorkspace *ws;
  gint64 run;
  GtkWidget *prompt, *tokens, *temperature, *seed, *generate, *stop, *output, *status;
  GCancellable *cancel;   /* of the generation under way; NULL when none */
  guint generation;
  int n_tokens;
  gint64 started;
  gboolean disposed;
};

G_DEFINE_FINAL_TYPE (NlGenerateBox, nl_generate_box, ADW_TYPE_BIN)

static void
stream_clear (gpointer data)
{
  Stream *s = data;
  g_mutex_clear (&s->lock);
  g_string_free (s->pending, TRUE);
  g_object_unref (s->box);
}

static void
stream_release (gpointer s)
{
  g_atomic_rc_box_release_full (s, stream_clear);
}

static void
update_status (NlGenerateBox *b, const char *text)
{
  gtk_label_set_text (GTK_LABEL (b->status), text);
}

static void
set_running (NlGenerateBox *b, gboolean running)
{
  gtk_widget_set_sensitive (b->generate, !running && b->ws);
  gtk_widget_set_sensitive (b->stop, running);
}

/* main loop: what the worker sampled since the last flush */
static gboolean
stream_flush (gpointer data)
{
  Stream *s = data;
  NlGenerateBox *b = s->box;
  g_autofree char *text = NULL;
  int n;

  g_mutex_lock (&s->lock);
  text = g_strndup (s->pending->str, s->pending->len);
  n = s->pending_n;
  g_string_truncate (s->pending, 0);
  s->pending_n = 0;
  s->idle_queued = FALSE;
  g_mutex_unlock (&s->lock);
  if (b->disposed || s->generation != b->generation || n == 0)
    return G_SOURCE_REMOVE;
  {
    GtkTextBuffer *buf = gtk_text_view_get_buffer (GTK_TEXT_VIEW (b->output));
    GtkTextIter end;
    g_autofree char *status = NULL;
    gtk_text_buffer_get_end_iter (buf, &end);
    gtk_text_buffer_insert (buf, &end, text, -1);
    b->n_tokens += n;
    status = g_strdup_printf (ngettext ("%d token…", "%d tokens…", b->n_tokens), b->n_tokens);
    update_status (b, status);
  }
  return G_SOURCE_REMOVE;
}

typedef struct {
  NlWorkspace *ws;
  gint64 run;
  char *prompt;
  int tokens;
  double temperature;
  guint64 seed;
  GCancellable *cancel;
  Stream *stream;
} Job;

static void
job_free (gpointer data)
{
  Job *j = data;
  g_object_unref (j->ws);
  g_free (j->prompt);
  g_object_unref (j->cancel);
  stream_release (j->stream);
  g_free (j);
}

/* the worker: each token's text into the stream, one idle at a time */
static gboolean
on_token (const char *piece, gpointer data)
{
  Job *j = data;
  Stream *s = j->stream;
  g_mutex_lock (&s->lock);
  g_string_append (s->pending, piece);
  s->pending_n++;
  if (!s->idle_queued)
    {
      s->idle_queued = TRUE;
      g_idle_add_full (G_PRIORITY_DEFAULT, stream_flush, g_atomic_rc_box_acquire (s), stream_release);
    }
  g_mutex_unlock (&s->lock);
  return !g_cancellable_is_cancelled (j->cancel);
}

static void
generate_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  Job *j = data;
  GError *error = NULL;
  char *text = nl_generate_text_full (nl_workspace_get_project (j->ws), j->run, j->prompt, j->tokens, j->temperature,
                                      j->seed, on_token, j, j->cancel, &error);
  if (text)
    g_task_return_pointer (task, text, g_free);
  else
    g_task_return_error (task, error);
}

static void
generate_done (GObject *source, GAsyncResult *res, gpointer user)
{
  NlGenerateBox *b = NL_GENERATE_BOX (source);
  Job *j = g_task_get_task_data (G_TASK (res));
  g_autoptr (GError) error = NULL;
  g_autofree char *text = g_task_propagate_pointer (G_TASK (res), &error);
  g_autofree char *status = NULL;
  gboolean stopped = g_cancellable_is_cancelled (j->cancel);

  nl_workspace_busy_pop (j->ws);
  if (b->disposed || j->stream->generation != b->generation)
    return;
  stream_flush (g_atomic_rc_box_acquire (j->stream));
  stream_release (j->stream);
  g_clear_object (&b->cancel);
  set_running (b, FALSE);
  if (error && !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    status = g_strdup (error->message);
  else if (stopped)
    status = g_strdup_printf (ngettext ("Stopped after %d token", "Stopped after %d tokens", b->n_tokens), b->n_tokens);
  else
    status = g_strdup_printf (ngettext ("%d token in %.1f s", "%d tokens in %.1f s", b->n_tokens), b->n_tokens,
                              (g_get_monotonic_time () - b->started) / 1e6);
  update_status (b, status);
  if (error && !stopped)
    gtk_widget_add_css_class (b->status, "error");
}

gboolean
nl_generate_box_start (NlGenerateBox *b)
{
  g_autoptr (GTask) task = NULL;
  Job *j;
  Stream *s;

  g_return_val_if_fail (NL_IS_GENERATE_BOX (b), FALSE);
  if (!b->ws || b->cancel)
    return FALSE;
  b->generation++;
  b->n_tokens = 0;
  b->started = g_get_monotonic_time ();
  b->cancel = g_cancellable_new ();
  gtk_text_buffer_set_text (gtk_text_view_get_buffer (GTK_TEXT_VIEW (b->output)), "", -1);
  gtk_widget_remove_css_class (b->status, "error");
  update_status (b, _("Loading the model…"));
  s = g_atomic_rc_box_new0 (Stream);
  g_mutex_init (&s->lock);
  s->pending = g_string_new (NULL);
  s->box = g_object_ref (b);
  s->generation = b->generation;
  j = g_new0 (Job, 1);
  j->ws = g_object_ref (b->ws);
  j->run = b->run;
  j->prompt = g_strdup (gtk_editable_get_text (GTK_EDITABLE (b->prompt)));
  j->tokens = gtk_spin_button_get_value_as_int (GTK_SPIN_BUTTON (b->tokens));
  j->temperature = gtk_spin_button_get_value (GTK_SPIN_BUTTON (b->temperature));
  j->seed = (guint64) gtk_spin_button_get_value (GTK_SPIN_BUTTON (b->seed));
  j->cancel = g_object_ref (b->cancel);
  j->stream = s;
  set_running (b, TRUE);
  nl_workspace_busy_push (b->ws);
  task = g_task_new (b, NULL, generate_done, NULL);
  g_task_set_task_data (task, j, job_free);
  g_task_run_in_thread (task, generate_thread);
  return TRUE;
}

void
nl_generate_box_stop (NlGenerateBox *b)
{
  g_return_if_fail (NL_IS_GENERATE_BOX (b));
  if (b->cancel)
    g_cancellable_cancel (b->cancel);
}

gboolean
nl_generate_box_is_running (NlGenerateBox *b)
{
  g_return_val_if_fail (NL_IS_GENERATE_BOX (b), FALSE);
  return b->cancel != NULL;
}

char *
nl_generate_box_dup_text (NlGenerateBox *b)
{
  GtkTextBuffer *buf;
  GtkTextIter s, e;
  g_return_val_if_fail (NL_IS_GENERATE_BOX (b), NULL);
  buf = gtk_text_view_get_buffer (GTK_TEXT_VIEW (b->output));
  gtk_text_buffer_get_bounds (buf, &s, &e);
  return gtk_text_buffer_get_text (buf, &s, &e, FALSE);
}

int
nl_generate_box_get_n_tokens (NlGenerateBox *b)
{
  g_return_val_if_fail (NL_IS_GENERATE_BOX (b), 0);
  return b->n_tokens;
}

GtkWidget *
nl_generate_box_get_part (NlGenerateBox *b, const char *part)
{
  const struct {
    const char *name;
    GtkWidget *w;
  } parts[] = { { "prompt", b->prompt }, { "tokens", b->tokens }, { "temperature", b->temperature },
                { "seed", b->seed }, { "generate", b->generate }, { "stop", b->stop },
                { "output", b->output }, { "status", b->status } };
  for (guint i = 0; i < G_N_ELEMENTS (parts); i++)
    if (g_str_equal (part, parts[i].name))
      return parts[i].w;
  return NULL;
}

void
nl_generate_box_set_run (NlGenerateBox *b, NlWorkspace *ws, gint64 run)
{
  g_return_if_fail (NL_IS_GENERATE_BOX (b));
  nl_generate_box_stop (b);
  g_clear_object (&b->cancel);
  b->generation++;  /* what is still coming belongs to the old run */
  g_set_object (&b->ws, ws);
  b->run = run;
  set_running (b, FALSE);
  update_status (b, "");
}

/* ---- the widgets ---- */

static GtkWidget *
field_row (AdwPreferencesGroup *group, const char *title, const char *subtitle, GtkWidget *field)
{
  GtkWidget *row = adw_action_row_new ();
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), title);
  if (subtitle)
    adw_action_row_set_subtitle (ADW_ACTION_ROW (row), subtitle);
  gtk_widget_set_valign (field, GTK_ALIGN_CENTER);
  adw_action_row_add_suffix (ADW_ACTION_ROW (row), field);
  gtk_accessible_update_property (GTK_ACCESSIBLE (field), GTK_ACCESSIBLE_PROPERTY_LABEL, title, -1);
  adw_preferences_group_add (group, row);
  return row;
}

static GtkWidget *
spin (double lo, double hi, double step, double value, int digits)
{
  GtkWidget *w = gtk_spin_button_new_with_range (lo, hi, step);
  gtk_spin_button_set_digits (GTK_SPIN_BUTTON (w), digits);
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (w), value);
  return w;
}

static void
nl_generate_box_init (NlGenerateBox *b)
{
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 12), *buttons = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 8);
  GtkWidget *group = adw_preferences_group_new (), *scrolled = gtk_scrolled_window_new ();

  adw_preferences_group_set_title (ADW_PREFERENCES_GROUP (group), _("Generate Text"));
  adw_preferences_group_set_description (ADW_PREFERENCES_GROUP (group),
                                         _("The model continues the prompt one token at a time, each drawn from "
                                           "its predicted distribution; the same seed gives the same text."));
  b->prompt = gtk_entry_new ();
  gtk_editable_set_width_chars (GTK_EDITABLE (b->prompt), 32);
  gtk_entry_set_placeholder_text (GTK_ENTRY (b->prompt), _("The text to continue"));
  field_row (ADW_PREFERENCES_GROUP (group), _("Prompt"), NULL, b->prompt);
  b->tokens = spin (1, 100000, 10, 200, 0);
  field_row (ADW_PREFERENCES_GROUP (group), _("Tokens"), _("How many to generate"), b->tokens);
  b->temperature = spin (0, 5, 0.05, 1.0, 2);
  field_row (ADW_PREFERENCES_GROUP (group), _("Temperature"),
             _("0 always takes the most likely token; above 1 the choice is more random"), b->temperature);
  b->seed = spin (0, 4294967295.0, 1, 1, 0);
  field_row (ADW_PREFERENCES_GROUP (group), _("Seed"), NULL, b->seed);
  gtk_box_append (GTK_BOX (box), group);

  b->generate = gtk_button_new_with_mnemonic (_("_Generate"));
  gtk_widget_add_css_class (b->generate, "suggested-action");
  b->stop = gtk_button_new_with_mnemonic (_("_Stop"));
  b->status = gtk_label_new ("");
  gtk_widget_add_css_class (b->status, "dim-label");
  gtk_label_set_xalign (GTK_LABEL (b->status), 0);
  gtk_label_set_wrap (GTK_LABEL (b->status), TRUE);
  gtk_widget_set_hexpand (b->status, TRUE);
  gtk_box_append (GTK_BOX (buttons), b->status);
  gtk_box_append (GTK_BOX (buttons), b->stop);
  gtk_box_append (GTK_BOX (buttons), b->generate);
  gtk_box_append (GTK_BOX (box), buttons);
  g_signal_connect_swapped (b->generate, "clicked", G_CALLBACK (nl_generate_box_start), b);
  g_signal_connect_swapped (b->prompt, "activate", G_CALLBACK (nl_generate_box_start), b);
  g_signal_connect_swapped (b->stop, "clicked", G_CALLBACK (nl_generate_box_stop), b);

  b->output = gtk_text_view_new ();
  gtk_text_view_set_editable (GTK_TEXT_VIEW (b->output), FALSE);
  gtk_text_view_set_monospace (GTK_TEXT_VIEW (b->output), TRUE);
  gtk_text_view_set_wrap_mode (GTK_TEXT_VIEW (b->output), GTK_WRAP_WORD_CHAR);
  gtk_text_view_set_left_margin (GTK_TEXT_VIEW (b->output), 12);
  gtk_text_view_set_right_margin (GTK_TEXT_VIEW (b->output), 12);
  gtk_text_view_set_top_margin (GTK_TEXT_VIEW (b->output), 12);
  gtk_accessible_update_property (GTK_ACCESSIBLE (b->output), GTK_ACCESSIBLE_PROPERTY_LABEL, _("Generated text"), -1);
  gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (scrolled), b->output);
  gtk_scrolled_window_set_min_content_height (GTK_SCROLLED_WINDOW (scrolled), 220);
  gtk_widget_set_vexpand (scrolled, TRUE);
  gtk_widget_add_css_class (scrolled, "card");
  gtk_box_append (GTK_BOX (box), scrolled);

  gtk_widget_set_margin_start (box, 18);
  gtk_widget_set_margin_end (box, 18);
  gtk_widget_set_margin_top (box, 18);
  gtk_widget_set_margin_bottom (box, 18);
  adw_bin_set_child (ADW_BIN (b), box);
  set_running (b, FALSE);
}

static void
nl_generate_box_dispose (GObject *object)
{
  NlGenerateBox *b = NL_GENERATE_BOX (object);
  b->disposed = TRUE;
  if (b->cancel)
    g_cancellable_cancel (b->cancel);
  g_clear_object (&b->cancel);
  g_clear_object (&b->ws);
  G_OBJECT_CLASS (nl_generate_box_parent_class)->dispose (object);
}

static void
nl_generate_box_class_init (NlGenerateBoxClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = nl_generate_box_dispose;
}

GtkWidget *
nl_generate_box_new (void)
{
  return g_object_new (NL_TYPE_GENERATE_BOX, NULL);
}
