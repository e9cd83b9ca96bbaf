/* test-text-run-gui.c — text runs in the GUI, on runs trained here: a
 * keyword-decides-the-class text classifier (with some labels flipped, so
 * that there are mistakes) in the evaluation view — typed text classified
 * off the main loop, its per-class scores, the mistakes shown as their
 * texts decoded from token ids — and a tiny character language model
 * whose evaluation window opens on its Generate tab, streaming tokens
 * from a worker as they come, stoppable, reproducible for a seed. */
#include <string.h>

#include "engine/session/nl-generate.h"
#include "engine/session/nl-run.h"
#include "tests/nl-test-gui.h"
#include "tests/nl-test-util.h"
#include "ui/experiments/nl-evaluation-view.h"
#include "ui/experiments/nl-evaluation-window.h"
#include "ui/experiments/nl-generate-box.h"
#include "ui/experiments/nl-text-predict.h"

#define MAX_LEN 8

static char *work_dir;
static NlWorkspace *workspace;
static gint64 text_run, lm_run;
static GPtrArray *texts; /* the classifier's rows as the vocabulary decodes them */

static const char *text_net =
  "{\"format\":\"netloom.network\",\"version\":1,\"name\":\"kw\",\"nodes\":["
  "{\"id\":\"tokens\",\"op\":\"Input\",\"params\":{\"lengths\":\"nonzero\"}},"
  "{\"id\":\"embed\",\"op\":\"Embedding\",\"params\":{\"input_dim\":64,\"output_dim\":16,\"padding_index\":0}},"
  "{\"id\":\"pool\",\"op\":\"SequencePool\",\"params\":{\"mode\":\"max\"}},"
  "{\"id\":\"out\",\"op\":\"Dense\",\"params\":{\"units\":2}}],"
  "\"edges\":[\"tokens -> embed\",\"embed -> pool\",\"pool -> out\"]}";

/* next character from the current one: an embedding and a per-step Dense */
static const char *lm_net =
  "{\"format\":\"netloom.network\",\"version\":1,\"name\":\"lm\",\"nodes\":["
  "{\"id\":\"tokens\",\"op\":\"Input\",\"params\":{\"lengths\":\"nonzero\"}},"
  "{\"id\":\"embed\",\"op\":\"Embedding\",\"params\":{\"input_dim\":16,\"output_dim\":16,\"padding_index\":0}},"
  "{\"id\":\"out\",\"op\":\"Dense\",\"params\":{\"units\":16,\"flatten\":false}}],"
  "\"edges\":[\"tokens -> embed\",\"embed -> out\"]}";

static void
train (const char *name, const char *json, const char *spec, NlTokenizerKind tok, int epochs, double lr,
       gint64 *run)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlNetwork) net = nl_network_load_data (json, -1, &error);
  g_auto (NlRunConfig) cfg = { 0 };
  g_assert_no_error (error);
  nl_test_tiny_train_config (&cfg, spec);
  nl_run_config_set_dataset (&cfg, spec);
  cfg.epochs = epochs;
  cfg.optim.lr = lr;
  cfg.batch_size = 16;
  cfg.data.max_length = MAX_LEN;
  cfg.data.tokenizer = tok;
  nl_test_ok_or_die (nl_run_train (nl_workspace_get_project (workspace), name, net, &cfg, NULL, run, &error), error,
                     name);
}

/* 300 rows "w1 w2 KEY w3": good -> pos, bad -> neg, one in four flipped */
static char *
write_keyword_csv (void)
{
  static const char *const filler[] = { "the", "film", "was", "quite", "plot", "actors", "music", "story" };
  char *path = g_build_filename (work_dir, "kw.csv", NULL);
  GString *s = g_string_new ("text,label\n");
  texts = g_ptr_array_new_with_free_func (g_free);
  for (int i = 0; i < 300; i++)
    {
      gboolean good = (i * 7 + i / 3) % 2 == 0, flip = i % 4 == 3;
      g_autofree char *row = g_strdup_printf ("%s %s %s %s", filler[i % 8], filler[(i / 8) % 8],
                                              good ? "good" : "bad", filler[(i * 5 + 1) % 8]);
      g_string_append_printf (s, "%s,%s\n", row, good != flip ? "pos" : "neg");
      g_ptr_array_add (texts, g_steal_pointer (&row));
    }
  g_assert_true (g_file_set_contents (path, s->str, -1, NULL));
  g_string_free (s, TRUE);
  return path;
}

static gboolean
view_idle (gpointer data)
{
  return !nl_evaluation_view_is_loading (data) && !nl_workspace_is_busy (workspace);
}

static gboolean
not_busy (gpointer data)
{
  return !nl_workspace_is_busy (workspace);
}

static void
test_predict_text (void)
{
  GtkWidget *view = nl_evaluation_view_new ();
  GtkWindow *win = nl_test_show_in_window (view, 1100, 900);
  NlTextPredict *tp = NL_TEXT_PREDICT (nl_evaluation_view_get_text_predict (NL_EVALUATION_VIEW (view)));
  GtkWidget *gallery = nl_evaluation_view_get_gallery (NL_EVALUATION_VIEW (view)), *scores, *row, *child;
  const NlEvaluation *ev;
  int n_mistakes = 0;

  nl_evaluation_view_load (NL_EVALUATION_VIEW (view), workspace, text_run, "best");
  g_assert_true (nl_test_wait_until (view_idle, view, 60000));
  nl_test_pump (50);
  g_assert_null (nl_evaluation_view_get_error (NL_EVALUATION_VIEW (view)));
  ev = nl_evaluation_view_get_evaluation (NL_EVALUATION_VIEW (view));
  g_assert_nonnull (ev);
  g_assert_cmpint (ev->n_classes, ==, 2);
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (tp)));
  /* no image to explain: the Explain panel is not offered */
  g_assert_false (gtk_widget_get_visible (nl_evaluation_view_get_explain_panel (NL_EVALUATION_VIEW (view))));
  g_assert_false (nl_evaluation_view_explain_mistake (NL_EVALUATION_VIEW (view), 0));
  /* the mistakes (the flipped labels) as their texts: a row of the file each */
  for (GtkWidget *c = gtk_widget_get_first_child (gallery); c; c = gtk_widget_get_next_sibling (c))
    {
      GtkWidget *box = gtk_flow_box_child_get_child (GTK_FLOW_BOX_CHILD (c));
      GtkWidget *text = gtk_widget_get_first_child (box);
      g_assert_true (GTK_IS_LABEL (text));
      g_assert_true (gtk_widget_has_css_class (text, "nl-mistake-text"));
      g_assert_true (g_ptr_array_find_with_equal_func (texts, gtk_label_get_label (GTK_LABEL (text)), g_str_equal,
                                                       NULL));
      n_mistakes++;
    }
  g_test_message ("%" G_GINT64_FORMAT " test samples, accuracy %.3f, %d mistakes", ev->n_samples, ev->accuracy,
                  ev->n_misclassified);
  g_assert_cmpint (n_mistakes, ==, ev->n_misclassified);
  g_assert_cmpint (n_mistakes, >, 0);

  /* typed text: classified on a worker, the scores sorted */
  gtk_editable_set_text (GTK_EDITABLE (nl_text_predict_get_part (tp, "entry")), "the music was good");
  g_signal_emit_by_name (nl_text_predict_get_part (tp, "entry"), "activate");
  g_assert_true (nl_text_predict_is_busy (tp));
  g_assert_true (nl_test_wait_until (not_busy, NULL, 60000));
  scores = nl_text_predict_get_part (tp, "scores");
  g_assert_false (gtk_widget_get_visible (nl_text_predict_get_part (tp, "message")));
  row = gtk_widget_get_first_child (scores);
  g_assert_nonnull (row);
  child = gtk_widget_get_first_child (row);
  g_assert_cmpstr (gtk_label_get_label (GTK_LABEL (child)), ==, "pos");
  g_assert_cmpfloat (gtk_progress_bar_get_fraction (GTK_PROGRESS_BAR (gtk_widget_get_next_sibling (child))), >, 0.5);
  g_assert_nonnull (gtk_widget_get_next_sibling (row)); /* the other class */
  g_assert_null (gtk_widget_get_next_sibling (gtk_widget_get_next_sibling (row)));
  g_assert_true (nl_text_predict_classify (tp, "what a bad plot"));
  g_assert_true (nl_test_wait_until (not_busy, NULL, 60000));
  child = gtk_widget_get_first_child (gtk_widget_get_first_child (scores));
  g_assert_cmpstr (gtk_label_get_label (GTK_LABEL (child)), ==, "neg");
  {
    /* the shot shows the mistakes and the typed text's scores */
    GtkAdjustment *adj = gtk_scrolled_window_get_vadjustment (
      GTK_SCROLLED_WINDOW (gtk_widget_get_ancestor (scores, GTK_TYPE_SCROLLED_WINDOW)));
    gtk_adjustment_set_value (adj, gtk_adjustment_get_upper (adj));
    nl_test_save_shot (GTK_WIDGET (win), "text-predict.png");
  }
  gtk_window_destroy (win);
}

static gboolean
box_done (gpointer b)
{
  return !nl_generate_box_is_running (b) && !nl_workspace_is_busy (workspace);
}

static void
stop_on_first (GtkTextBuffer *buf, GtkTextIter *at, const char *text, int len, NlGenerateBox *b)
{
  nl_generate_box_stop (b);
}

static void
test_generate (void)
{
  GtkWindow *win = nl_evaluation_window_new (NULL, workspace, lm_run, "best", FALSE);
  NlGenerateBox *b = NL_GENERATE_BOX (nl_evaluation_window_get_generate_box (win));
  GtkTextBuffer *buf;
  g_autofree char *text = NULL, *again = NULL, *engine = NULL, *stopped = NULL;
  g_autoptr (GError) error = NULL;
  gulong id;

  g_assert_nonnull (b);
  g_assert_true (gtk_widget_get_mapped (GTK_WIDGET (b))); /* the tab it opens on */
  buf = gtk_text_view_get_buffer (GTK_TEXT_VIEW (nl_generate_box_get_part (b, "output")));
  /* the cycle abcd learned: at temperature 0 the model continues it */
  gtk_editable_set_text (GTK_EDITABLE (nl_generate_box_get_part (b, "prompt")), "abc");
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (nl_generate_box_get_part (b, "tokens")), 12);
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (nl_generate_box_get_part (b, "temperature")), 0);
  g_signal_emit_by_name (nl_generate_box_get_part (b, "generate"), "clicked");
  g_assert_true (nl_generate_box_is_running (b));
  g_assert_false (gtk_widget_get_sensitive (nl_generate_box_get_part (b, "generate")));
  g_assert_true (nl_test_wait_until (box_done, b, 60000));
  text = nl_generate_box_dup_text (b);
  g_assert_cmpstr (text, ==, "dabcdabcdabc");
  g_assert_cmpint (nl_generate_box_get_n_tokens (b), ==, 12);
  g_assert_nonnull (strstr (gtk_label_get_label (GTK_LABEL (nl_generate_box_get_part (b, "status"))), "12 tokens"));
  nl_test_save_shot (GTK_WIDGET (win), "generate-box.png");

  /* sampled: the same seed gives the same text, as the engine gives it */
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (nl_generate_box_get_part (b, "temperature")), 1.5);
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (nl_generate_box_get_part (b, "seed")), 7);
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (nl_generate_box_get_part (b, "tokens")), 40);
  g_assert_true (nl_generate_box_start (b));
  g_assert_true (nl_test_wait_until (box_done, b, 60000));
  g_free (text);
  text = nl_generate_box_dup_text (b);
  g_assert_true (nl_generate_box_start (b));
  g_assert_true (nl_test_wait_until (box_done, b, 60000));
  again = nl_generate_box_dup_text (b);
  g_assert_cmpstr (text, ==, again);
  engine = nl_generate_text (nl_workspace_get_project (workspace), lm_run, "abc", 40, 1.5, 7, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (text, ==, engine);

  /* streamed: the first tokens show while the rest are being sampled; Stop
   * there ends a long generation early, keeping the text so far */
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (nl_generate_box_get_part (b, "temperature")), 0);
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (nl_generate_box_get_part (b, "tokens")), 100000);
  id = g_signal_connect (buf, "insert-text", G_CALLBACK (stop_on_first), b);
  g_assert_true (nl_generate_box_start (b));
  g_assert_true (nl_test_wait_until (box_done, b, 60000));
  g_signal_handler_disconnect (buf, id);
  stopped = nl_generate_box_dup_text (b);
  g_assert_cmpint (nl_generate_box_get_n_tokens (b), >, 0);
  g_assert_cmpint (nl_generate_box_get_n_tokens (b), <, 100000);
  g_assert_cmpint (strlen (stopped), ==, nl_generate_box_get_n_tokens (b));
  /* at temperature 0, the cycle from where the prompt left it */
  for (size_t k = 0; k < strlen (stopped); k++)
    g_assert_cmpint (stopped[k], ==, "dabc"[k % 4]);
  g_assert_nonnull (strstr (gtk_label_get_label (GTK_LABEL (nl_generate_box_get_part (b, "status"))), "Stopped"));
  gtk_window_destroy (win);
  nl_test_pump (50);
}

/* a classifier's window has no Generate tab */
static void
test_no_generate_for_classifier (void)
{
  GtkWindow *win = nl_evaluation_window_new (NULL, workspace, text_run, "best", FALSE);
  g_assert_null (nl_evaluation_window_get_generate_box (win));
  g_assert_true (nl_test_wait_until (not_busy, NULL, 60000));
  gtk_window_destroy (win);
  nl_test_pump (50);
}

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *path = NULL, *csv = NULL, *txt = NULL, *spec = NULL, *lm_spec = NULL;
  GString *cycle = g_string_new (NULL);
  NlProject *project;
  int status;

  nl_test_gui_init (&argc, &argv);
  work_dir = g_dir_make_tmp ("netloom-textrun-XXXXXX", NULL);
  path = g_build_filename (work_dir, "p.netloom", NULL);
  project = nl_project_open (path, TRUE, &error);
  g_assert_no_error (error);
  workspace = nl_workspace_new (project);
  csv = write_keyword_csv ();
  spec = g_strdup_printf ("text:%s", csv);
  train ("kw", text_net, spec, NL_TOKENIZER_WORD, 8, 0.5, &text_run);
  for (int i = 0; i < 600; i++)
    g_string_append (cycle, "abcd");
  txt = g_build_filename (work_dir, "cycle.txt", NULL);
  g_assert_true (g_file_set_contents (txt, cycle->str, -1, NULL));
  g_string_free (cycle, TRUE);
  lm_spec = g_strdup_printf ("text-lm:%s", txt);
  train ("lm", lm_net, lm_spec, NL_TOKENIZER_CHAR, 6, 0.5, &lm_run);

  g_test_add_func ("/text-run-gui/predict-text", test_predict_text);
  g_test_add_func ("/text-run-gui/generate", test_generate);
  g_test_add_func ("/text-run-gui/no-generate-for-classifier", test_no_generate_for_classifier);
  status = g_test_run ();

  g_clear_object (&workspace);
  g_ptr_array_unref (texts);
  nl_test_remove_tree (work_dir);
  g_free (work_dir);
  return status;
}
