/* test-pseudo-locale.c — every text the window shows is translated: under
 * the pseudo-locale of tests/pseudo-locale.py (each message "[[…]]", see
 * test-pseudo-locale.sh), the shown labels, tooltips, placeholders and menu
 * items of the welcome screen and of each page of the sample project must
 * carry the brackets, unless they are data (numbers, names from the
 * project, layer types) listed below. Runs under Xvfb. */
#include "tests/nl-test-gui.h"
#include "tests/nl-test-util.h"
#include "ui/nl-application.h"
#include "ui/nl-window.h"
#include "engine/session/nl-catalog.h"

#include <glib/gi18n.h>
#include <string.h>

/* Texts that are data, not messages: the application's name and the
 * sample project's, its networks, pipeline and transform specs, the
 * precision and device names, Fashion-MNIST's classes. Matched whole. */
static const char *const data_texts[] = {
  "netloom", "sample", "sample.netloom", "lenet", "mlp", "fashion-mnist", "normalize:0.2860:0.3530", "fp32", "CPU",
  "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot",
  NULL,
};

/* Prefixes of data: a sample's index and class (its tooltip), the
 * reader's description of its data set (engine/data, untranslated) */
static const char *const data_prefixes[] = { "#", "Fashion-MNIST train (", NULL };

/* The layer types' names and one-line docs come from the op registry
 * (ops/, not translated: they are the engine's own words) */
static gboolean
is_op_text (const char *text)
{
  int n;
  const NlOpDef *const *ops = nl_catalog_ops (&n);
  for (int i = 0; i < n; i++)
    if (g_strcmp0 (text, ops[i]->name) == 0 || g_strcmp0 (text, ops[i]->doc) == 0)
      return TRUE;
  return FALSE;
}

static gboolean
is_data (const char *text)
{
  gboolean letters = FALSE;
  for (const char *p = text; *p; p = g_utf8_next_char (p))
    letters |= g_unichar_isalpha (g_utf8_get_char (p));
  if (!letters || g_strv_contains (data_texts, text) || is_op_text (text))
    return TRUE;
  for (guint i = 0; data_prefixes[i]; i++)
    if (g_str_has_prefix (text, data_prefixes[i]))
      return TRUE;
  return FALSE;
}

static void
check_text (GPtrArray *bad, const char *where, GtkWidget *w, const char *text)
{
  if (!text || !*text || strstr (text, "[[") || is_data (text))
    return;
  g_ptr_array_add (bad, g_strdup_printf ("%s: %s %s '%s'", where, G_OBJECT_TYPE_NAME (w),
                                         gtk_widget_get_name (w), text));
}

static void
check_menu (GPtrArray *bad, const char *where, GtkWidget *w, GMenuModel *menu)
{
  for (int i = 0; menu && i < g_menu_model_get_n_items (menu); i++)
    {
      g_autofree char *label = NULL;
      g_autoptr (GMenuLinkIter) links = g_menu_model_iterate_item_links (menu, i);
      GMenuModel *sub;
      if (g_menu_model_get_item_attribute (menu, i, G_MENU_ATTRIBUTE_LABEL, "s", &label))
        check_text (bad, where, w, label);
      while (g_menu_link_iter_get_next (links, NULL, &sub))
        {
          check_menu (bad, where, w, sub);
          g_object_unref (sub);
        }
    }
}

/* What is on screen under w: labels (the text of every row, button, title
 * and status page is one), tooltips, entry placeholders, menus. */
static void
check_tree (GPtrArray *bad, const char *where, GtkWidget *w)
{
  if (!gtk_widget_get_mapped (w))
    return;
  if (GTK_IS_LABEL (w))
    check_text (bad, where, w, gtk_label_get_text (GTK_LABEL (w)));
  if (GTK_IS_TEXT (w))
    check_text (bad, where, w, gtk_text_get_placeholder_text (GTK_TEXT (w)));
  if (GTK_IS_MENU_BUTTON (w))
    check_menu (bad, where, w, gtk_menu_button_get_menu_model (GTK_MENU_BUTTON (w)));
  check_text (bad, where, w, gtk_widget_get_tooltip_text (w));
  for (GtkWidget *c = gtk_widget_get_first_child (w); c; c = gtk_widget_get_next_sibling (c))
    check_tree (bad, where, c);
}

static void
report (GPtrArray *bad)
{
  for (guint i = 0; i < bad->len; i++)
    g_test_message ("not translated: %s", (char *) g_ptr_array_index (bad, i));
  g_assert_cmpuint (bad->len, ==, 0);
}

static gboolean
loaded (gpointer data)
{
  NlWindow *win = data;
  return nl_window_get_workspace (win) != NULL && !nl_window_is_busy (win);
}

static void
test_pseudo_locale_active (void)
{
  /* the catalog is there: without it every page would fail below, and a
   * broken setup must not pass for untranslated text */
  g_assert_cmpstr (_("No Project"), ==, "[[No Project]]");
  g_assert_cmpstr (ngettext ("%u run", "%u runs", 2), ==, "[[%u runs]]");
}

static void
test_pages_translated (void)
{
  g_autofree char *dir = g_dir_make_tmp ("netloom-i18n-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "sample.netloom", NULL);
  static const char *const pages[] = { "network", "data", "training", "experiments" };
  NlWindow *win = nl_window_new (NULL);
  g_autoptr (GPtrArray) bad = g_ptr_array_new_with_free_func (g_free);

  gtk_window_set_default_size (GTK_WINDOW (win), 1280, 800);
  gtk_window_present (GTK_WINDOW (win));
  nl_test_pump (100);
  check_tree (bad, "welcome", GTK_WIDGET (win));

  nl_window_open_project (win, path, NL_OPEN_SAMPLE);
  g_assert_true (nl_test_wait_until (loaded, win, 20000));
  for (guint i = 0; i < G_N_ELEMENTS (pages); i++)
    {
      nl_window_show_page (win, pages[i]);
      nl_test_pump (300);
      g_assert_true (nl_test_wait_until (loaded, win, 20000));
      check_tree (bad, pages[i], GTK_WIDGET (win));
    }
  gtk_window_destroy (GTK_WINDOW (win));
  nl_test_remove_tree (dir);
  /* every page's leftovers at once: one run shows them all */
  report (bad);
}

int
main (int argc, char **argv)
{
  /* NETLOOM_LOCALEDIR and LANGUAGE come from test-pseudo-locale.sh */
  nl_application_init_i18n ("/nonexistent");
  nl_test_gui_init (&argc, &argv);
  g_test_add_func ("/pseudo-locale/active", test_pseudo_locale_active);
  g_test_add_func ("/pseudo-locale/pages", test_pages_translated);
  return g_test_run ();
}
