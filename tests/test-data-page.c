/* test-data-page.c — the Data page on a sample project under Xvfb: the
 * preview grid (32 labelled samples, histogram, summary) loaded off the
 * main loop, the form saved into the project, the transform editor
 * (add, edit a parameter, reject a bad value, move, remove), a CSV chosen
 * in the file chooser's dialog, a bad file shown as one error
 * naming it with the project intact, obsolete loads dropped, new / delete
 * pipelines, unsaved drafts, and the source list read from the dataset
 * kind table. */
#include "tests/nl-test-gui.h"
#include "tests/nl-test-util.h"
#include "engine/data/nl-dataset-kind.h"
#include "ui/data/nl-class-histogram.h"
#include "ui/data/nl-data-page.h"
#include "ui/data/nl-sequence-plot.h"

#include <math.h>

#include <stdio.h>
#include <string.h>

typedef struct {
  char *dir, *path;
  NlWorkspace *ws;
  NlProject *p;       /* the workspace's */
  NlDataPage *page;
  GtkWindow *win;
  GPtrArray *toasts;
} Fixture;

static gboolean
idle (gpointer data)
{
  return !nl_workspace_is_busy (data);
}

static void
wait_idle (Fixture *f)
{
  g_assert_true (nl_test_wait_until (idle, f->ws, 30000));
  nl_test_pump (20);
}

static void
on_toast (NlWorkspace *ws, const char *message, Fixture *f)
{
  g_ptr_array_add (f->toasts, g_strdup (message));
}

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  NlProject *p;
  f->dir = g_dir_make_tmp ("netloom-data-page-XXXXXX", NULL);
  f->path = g_build_filename (f->dir, "t.netloom", NULL);
  g_assert_true (nl_project_create_sample (f->path, &error));
  p = nl_project_open (f->path, FALSE, &error);
  g_assert_no_error (error);
  f->ws = nl_workspace_new (p);
  f->p = p;
  f->toasts = g_ptr_array_new_with_free_func (g_free);
  g_signal_connect (f->ws, "toast", G_CALLBACK (on_toast), f);
  f->page = g_object_new (NL_TYPE_DATA_PAGE, NULL);
  f->win = nl_test_show_in_window (GTK_WIDGET (f->page), 1280, 800);
  nl_data_page_set_workspace (f->page, f->ws);
  /* loading starts at once and keeps the workspace busy until shown */
  g_assert_true (nl_workspace_is_busy (f->ws));
  wait_idle (f);
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  gtk_window_destroy (f->win);
  nl_test_pump (20);
  g_object_unref (f->ws);
  g_ptr_array_unref (f->toasts);
  nl_test_remove_tree (f->dir);
  g_free (f->dir);
  g_free (f->path);
}

static gpointer
child (Fixture *f, const char *name)
{
  GObject *o = gtk_widget_get_template_child (GTK_WIDGET (f->page), NL_TYPE_DATA_PAGE, name);
  g_assert_nonnull (o);
  return o;
}

/* the n-th tile's picture and label */
static void
tile (Fixture *f, int n, GtkPicture **pic, GtkLabel **label)
{
  GtkWidget *c = gtk_widget_get_first_child (child (f, "preview_grid"));
  for (int i = 0; i < n; i++)
    c = gtk_widget_get_next_sibling (c);
  c = gtk_flow_box_child_get_child (GTK_FLOW_BOX_CHILD (c));
  *pic = GTK_PICTURE (gtk_widget_get_first_child (c));
  *label = GTK_LABEL (gtk_widget_get_last_child (c));
}

static int
n_children (GtkWidget *w)
{
  int n = 0;
  for (GtkWidget *c = gtk_widget_get_first_child (w); c; c = gtk_widget_get_next_sibling (c))
    n++;
  return n;
}

static GtkWidget *
find_type (GtkWidget *w, GType type)
{
  if (G_TYPE_CHECK_INSTANCE_TYPE (w, type))
    return w;
  for (GtkWidget *c = gtk_widget_get_first_child (w); c; c = gtk_widget_get_next_sibling (c))
    {
      GtkWidget *hit = find_type (c, type);
      if (hit)
        return hit;
    }
  return NULL;
}

static GtkWidget *
transform_row (Fixture *f, int i)
{
  GtkWidget *row = gtk_widget_get_first_child (child (f, "transform_list"));
  for (int k = 0; k < i && row; k++)
    row = gtk_widget_get_next_sibling (row);
  g_assert_nonnull (row);
  return row;
}

static void
activate (Fixture *f, const char *action, GVariant *param)
{
  g_assert_true (gtk_widget_activate_action_variant (GTK_WIDGET (f->page), action, param));
}

/* the last tile has its size (layout runs on the frame clock) */
static gboolean
laid_out (gpointer data)
{
  GtkPicture *pic;
  GtkLabel *label;
  tile (data, 31, &pic, &label);
  return gtk_widget_get_width (GTK_WIDGET (pic)) > 0;
}

static void
test_preview (Fixture *f, gconstpointer data)
{
  static const char *const names[] = { "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                                       "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot", NULL };
  NlDataPreview *p = nl_data_page_get_preview (f->page);
  NlClassHistogram *h = child (f, "histogram");

  g_assert_cmpstr (nl_data_page_get_pipeline (f->page), ==, "fashion-mnist");
  g_assert_null (nl_data_page_get_error (f->page));
  g_assert_nonnull (p);
  g_assert_cmpint (n_children (child (f, "preview_grid")), ==, 32);
  g_assert_true (nl_test_wait_until (laid_out, f, 5000));
  for (int i = 0; i < 32; i++)
    {
      GtkPicture *pic;
      GtkLabel *label;
      g_autofree char *expect = nl_data_preview_label_text (p, i);
      GdkPaintable *tex;
      tile (f, i, &pic, &label);
      g_assert_true (g_strv_contains (names, gtk_label_get_label (label)));
      g_assert_cmpstr (gtk_label_get_label (label), ==, expect);
      /* 28 pixels scaled 3 times, nearest */
      tex = gtk_picture_get_paintable (pic);
      g_assert_cmpint (gdk_paintable_get_intrinsic_width (tex), ==, 84);
      g_assert_cmpint (gtk_widget_get_width (GTK_WIDGET (pic)), ==, 84);
    }
  g_assert_cmpint (nl_class_histogram_get_n_classes (h), ==, 10);
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (h)));
  g_assert_cmpfloat (nl_test_drawn_fraction (GTK_WIDGET (h)), >, 0.05);
  g_assert_cmpstr (gtk_label_get_label (child (f, "samples_label")), ==, "60,000");
  g_assert_cmpstr (gtk_label_get_label (child (f, "shape_label")), ==, "1×28×28");
  g_assert_cmpstr (gtk_label_get_label (child (f, "classes_label")), ==, "10");
  g_assert_false (gtk_widget_get_visible (child (f, "error_box")));
  g_assert_cmpuint (f->toasts->len, ==, 0);

  /* the file watcher's notifications leave an unchanged form alone ... */
  {
    GtkWidget *row = transform_row (f, 0);
    g_autoptr (NlPipelineInfo) pl = nl_project_load_pipeline (f->p, "fashion-mnist", NULL);
    nl_workspace_notify (f->ws, NL_WORKSPACE_ALL);
    g_assert_false (nl_workspace_is_busy (f->ws));
    g_assert_true (transform_row (f, 0) == row);
    /* ... and show another writer's change */
    pl->batch_size = 16;
    g_assert_cmpint (nl_project_save_pipeline (f->p, pl, NULL), >, 0);
    nl_workspace_notify (f->ws, NL_WORKSPACE_ALL);
    g_assert_cmpint (gtk_spin_button_get_value_as_int (child (f, "batch_spin")), ==, 16);
    g_assert_false (gtk_widget_has_css_class (child (f, "save_button"), "suggested-action"));
    g_assert_false (nl_workspace_is_busy (f->ws));  /* batch size does not change the samples */
  }

  /* a newer request obsoletes older ones: three shuffles, the last wins */
  for (int i = 0; i < 3; i++)
    activate (f, "data.shuffle-preview", NULL);
  wait_idle (f);
  {
    g_autoptr (NlPipelineInfo) pl = nl_data_page_dup_pipeline (f->page);
    g_autoptr (GError) error = NULL;
    g_autoptr (NlDataPreview) want = nl_data_preview_load (pl, 32, 3, NULL, NULL, &error);
    p = nl_data_page_get_preview (f->page);
    g_assert_no_error (error);
    g_assert_cmpmem (p->indices, 32 * sizeof (int64_t), want->indices, 32 * sizeof (int64_t));
  }
}

static void
test_save (Fixture *f, gconstpointer data)
{
  g_autoptr (NlPipelineInfo) before = nl_project_load_pipeline (f->p, "fashion-mnist", NULL);
  g_autoptr (NlPipelineInfo) after = NULL;
  g_autoptr (GError) error = NULL;
  GtkWidget *save = child (f, "save_button");

  g_assert_false (gtk_widget_has_css_class (save, "suggested-action"));
  gtk_spin_button_set_value (child (f, "batch_spin"), 64);
  gtk_switch_set_active (child (f, "shuffle_switch"), FALSE);
  g_assert_true (gtk_widget_has_css_class (save, "suggested-action"));
  /* batch options do not change the samples: no reload */
  g_assert_false (nl_workspace_is_busy (f->ws));
  activate (f, "data.save", NULL);
  wait_idle (f);
  after = nl_project_load_pipeline (f->p, "fashion-mnist", &error);
  g_assert_no_error (error);
  g_assert_cmpint (after->batch_size, ==, 64);
  g_assert_cmpstr (after->transforms, ==, before->transforms);
  g_assert_cmpstr (after->dataset_spec, ==, "fashion-mnist");
  g_assert_cmpint (after->workers, ==, before->workers);
  g_assert_nonnull (strstr (after->extra_json, "\"shuffle\":false"));
  g_assert_false (gtk_widget_has_css_class (save, "suggested-action"));

  /* renaming: the row moves to the new name */
  gtk_editable_set_text (child (f, "name_row"), "fashion-small");
  g_assert_true (nl_data_page_save (f->page, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (nl_data_page_get_pipeline (f->page), ==, "fashion-small");
  g_assert_null (nl_project_load_pipeline (f->p, "fashion-mnist", NULL));
  g_clear_pointer (&after, nl_pipeline_info_free);
  after = nl_project_load_pipeline (f->p, "fashion-small", &error);
  g_assert_cmpint (after->batch_size, ==, 64);
  /* an empty name is refused */
  gtk_editable_set_text (child (f, "name_row"), "  ");
  g_assert_false (nl_data_page_save (f->page, &error));
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_INVALID);
}

static void
test_transforms (Fixture *f, gconstpointer data)
{
  NlDataPreview *p;
  GtkWidget *entry;
  g_autoptr (NlPipelineInfo) pl = NULL;
  GtkPicture *pic;
  GtkLabel *label;

  g_assert_cmpint (n_children (child (f, "transform_list")), ==, 1);  /* the sample's normalize */
  activate (f, "data.add-transform", g_variant_new_string ("center-crop"));
  g_assert_cmpint (n_children (child (f, "transform_list")), ==, 2);
  wait_idle (f);
  /* its size defaults to the sample's */
  p = nl_data_page_get_preview (f->page);
  g_assert_cmpstr (p->transforms, ==, "normalize:0.286:0.353,center-crop:28x28");
  g_assert_cmpint (p->shape.d[1], ==, 28);

  /* edit the size in the row: the preview follows */
  entry = find_type (transform_row (f, 1), GTK_TYPE_ENTRY);
  g_assert_nonnull (entry);
  gtk_editable_set_text (GTK_EDITABLE (entry), "20");
  g_assert_true (nl_workspace_is_busy (f->ws));
  wait_idle (f);
  p = nl_data_page_get_preview (f->page);
  g_assert_cmpstr (p->transforms, ==, "normalize:0.286:0.353,center-crop:20x20");
  g_assert_cmpint (p->shape.d[1], ==, 20);
  g_assert_cmpint (p->shape.d[2], ==, 20);
  tile (f, 0, &pic, &label);
  g_assert_cmpint (gdk_paintable_get_intrinsic_width (gtk_picture_get_paintable (pic)), ==, 80);
  g_assert_cmpstr (gtk_label_get_label (child (f, "out_shape_label")), ==, "1×20×20");

  /* a bad value is marked and not applied */
  gtk_editable_set_text (GTK_EDITABLE (entry), "2x");
  g_assert_true (gtk_widget_has_css_class (entry, "error"));
  g_assert_false (nl_workspace_is_busy (f->ws));
  g_assert_true (nl_data_page_get_preview (f->page) == p);
  gtk_editable_set_text (GTK_EDITABLE (entry), "24x20");
  g_assert_false (gtk_widget_has_css_class (entry, "error"));
  wait_idle (f);
  p = nl_data_page_get_preview (f->page);
  g_assert_cmpint (p->shape.d[1], ==, 20);
  g_assert_cmpint (p->shape.d[2], ==, 24);

  /* move the crop up, then remove the normalize */
  activate (f, "data.transform-up", g_variant_new_int32 (1));
  pl = nl_data_page_dup_pipeline (f->page);
  g_assert_cmpstr (pl->transforms, ==, "center-crop:24x20,normalize:0.2860:0.3530");
  activate (f, "data.transform-remove", g_variant_new_int32 (1));
  g_assert_cmpint (n_children (child (f, "transform_list")), ==, 1);
  wait_idle (f);
  p = nl_data_page_get_preview (f->page);
  g_assert_cmpstr (p->transforms, ==, "center-crop:24x20");
  /* nothing was saved */
  g_clear_pointer (&pl, nl_pipeline_info_free);
  pl = nl_project_load_pipeline (f->p, "fashion-mnist", NULL);
  g_assert_cmpstr (pl->transforms, ==, "normalize:0.2860:0.3530");
}

static char *
write_file (Fixture *f, const char *name, const char *text)
{
  char *path = g_build_filename (f->dir, name, NULL);
  g_assert_true (g_file_set_contents (path, text, -1, NULL));
  return path;
}

static void
test_csv_and_errors (Fixture *f, gconstpointer data)
{
  g_autoptr (GString) csv = g_string_new ("w,x,y,z,label\n");
  g_autofree char *good = NULL, *bad = NULL;
  g_autoptr (GFile) good_file = NULL, bad_file = NULL;
  g_autoptr (NlPipelineInfo) pl = NULL;
  GtkFileChooser *chooser;
  NlDataPreview *p;

  for (int i = 0; i < 30; i++)
    g_string_append_printf (csv, "%d,%d,%d,%d,%d\n", i, i * 2, 30 - i, i % 5, i % 3);
  good = write_file (f, "good.csv", csv->str);
  bad = write_file (f, "bad.csv", "a,b\n1,2\n3\n");
  good_file = g_file_new_for_path (good);
  bad_file = g_file_new_for_path (bad);

  /* CSV samples are 1-d: the image transforms go first */
  activate (f, "data.transform-remove", g_variant_new_int32 (0));
  adw_combo_row_set_selected (child (f, "source_row"), 3);
  wait_idle (f);
  g_assert_true (gtk_widget_get_visible (child (f, "hint_label")));
  g_assert_null (nl_data_page_get_error (f->page));
  g_assert_true (gtk_widget_get_sensitive (child (f, "split_spin")));

  /* chosen in the file chooser's dialog, shown with the CSV filter */
  activate (f, "data.choose-source", NULL);
  chooser = nl_test_wait_chooser ("Choose the CSV file", 10000);
  g_assert_cmpint (gtk_file_chooser_get_action (chooser), ==, GTK_FILE_CHOOSER_ACTION_OPEN);
  g_assert_cmpstr (gtk_file_filter_get_name (gtk_file_chooser_get_filter (chooser)), ==, "CSV files");
  nl_test_choose_file (chooser, good_file);
  wait_idle (f);
  g_assert_null (nl_test_find_window (GTK_TYPE_FILE_CHOOSER_DIALOG));
  g_assert_null (nl_data_page_get_error (f->page));
  p = nl_data_page_get_preview (f->page);
  g_assert_nonnull (p);
  g_assert_cmpstr (gtk_label_get_label (child (f, "samples_label")), ==, "30");
  g_assert_cmpstr (gtk_label_get_label (child (f, "classes_label")), ==, "3");
  g_assert_cmpint (n_children (child (f, "preview_grid")), ==, 30);
  g_assert_cmpint (p->shape.d[0], ==, 4);
  /* a validation split holds samples out */
  gtk_spin_button_set_value (child (f, "split_spin"), 0.2);
  wait_idle (f);
  g_assert_cmpstr (gtk_label_get_label (child (f, "samples_label")), ==, "24");

  /* a bad file: one message naming it, inline and as a toast */
  nl_data_page_set_source_file (f->page, bad_file);
  wait_idle (f);
  g_assert_nonnull (nl_data_page_get_error (f->page));
  g_assert_nonnull (strstr (nl_data_page_get_error (f->page), bad));
  g_assert_true (gtk_widget_get_visible (child (f, "error_box")));
  g_assert_nonnull (strstr (gtk_label_get_label (child (f, "error_label")), bad));
  g_assert_cmpint (n_children (child (f, "preview_grid")), ==, 0);
  g_assert_null (nl_data_page_get_preview (f->page));
  g_assert_false (gtk_widget_get_visible (child (f, "details_box")));
  g_assert_cmpuint (f->toasts->len, ==, 1);
  g_assert_nonnull (strstr (f->toasts->pdata[0], bad));
  /* the project is untouched */
  pl = nl_project_load_pipeline (f->p, "fashion-mnist", NULL);
  g_assert_cmpstr (pl->dataset_spec, ==, "fashion-mnist");
  g_assert_cmpstr (pl->transforms, ==, "normalize:0.2860:0.3530");
  g_assert_true (nl_project_check (f->p, NULL));

  /* the file fixed on disk and chosen again: read afresh */
  g_assert_true (g_file_set_contents (bad, "a,b\n1,0\n3,1\n5,1\n", -1, NULL));
  nl_data_page_set_source_file (f->page, bad_file);
  wait_idle (f);
  g_assert_null (nl_data_page_get_error (f->page));
  g_assert_cmpstr (gtk_label_get_label (child (f, "classes_label")), ==, "2");

  /* back to the good file: the error goes */
  nl_data_page_set_source_file (f->page, good_file);
  wait_idle (f);
  g_assert_null (nl_data_page_get_error (f->page));
  g_assert_false (gtk_widget_get_visible (child (f, "error_box")));
  g_assert_cmpint (n_children (child (f, "preview_grid")), ==, 24);
}

static void
test_new_delete_drafts (Fixture *f, gconstpointer data)
{
  g_autoptr (GPtrArray) list = NULL;
  AdwMessageDialog *dlg = NULL;
  NlPipelineInfo other = { .name = (char *) "from-elsewhere", .dataset_spec = (char *) "mnist", .batch_size = 8 };

  /* unsaved edits survive showing another pipeline */
  gtk_spin_button_set_value (child (f, "batch_spin"), 32);
  activate (f, "data.new", NULL);
  wait_idle (f);
  g_assert_cmpstr (nl_data_page_get_pipeline (f->page), ==, "pipeline");
  g_assert_cmpstr (gtk_editable_get_text (child (f, "name_row")), ==, "pipeline");
  g_assert_cmpint (gtk_spin_button_get_value_as_int (child (f, "batch_spin")), ==, 128);
  list = nl_project_list_pipelines (f->p, NULL);
  g_assert_cmpint (list->len, ==, 2);
  g_assert_true (nl_data_page_select_pipeline (f->page, "fashion-mnist"));
  wait_idle (f);
  g_assert_cmpint (gtk_spin_button_get_value_as_int (child (f, "batch_spin")), ==, 32);
  g_assert_true (gtk_widget_has_css_class (child (f, "save_button"), "suggested-action"));
  g_assert_false (nl_data_page_select_pipeline (f->page, "no-such"));

  /* another writer's pipeline appears on ::changed */
  g_assert_cmpint (nl_project_save_pipeline (f->p, &other, NULL), >, 0);
  nl_workspace_notify (f->ws, NL_WORKSPACE_PIPELINES);
  g_assert_true (nl_data_page_select_pipeline (f->page, "from-elsewhere"));
  wait_idle (f);
  g_assert_cmpstr (nl_data_page_get_pipeline (f->page), ==, "from-elsewhere");

  /* delete asks first */
  activate (f, "data.delete", NULL);
  g_assert_nonnull (dlg = nl_test_find_message_dialog (5000));
  adw_message_dialog_response (dlg, "delete");
  wait_idle (f);
  g_assert_null (nl_project_load_pipeline (f->p, "from-elsewhere", NULL));
  g_assert_nonnull (nl_data_page_get_pipeline (f->page));
  g_assert_cmpstr (nl_data_page_get_pipeline (f->page), !=, "from-elsewhere");
  gtk_window_destroy (GTK_WINDOW (dlg));
}

/* the source list is the kind table, and the form follows each row */
static void
test_kinds (Fixture *f, gconstpointer data)
{
  int n;
  const NlDatasetKind *kinds = nl_dataset_kinds (&n);
  AdwComboRow *source = child (f, "source_row");
  GListModel *model = adw_combo_row_get_model (source);

  g_assert_cmpuint (g_list_model_get_n_items (model), ==, n);
  for (int i = 0; i < n; i++)
    {
      const NlDatasetKind *k = &kinds[i];
      g_autoptr (GtkStringObject) item = g_list_model_get_item (model, i);
      g_assert_cmpstr (gtk_string_object_get_string (item), ==, k->title);
      adw_combo_row_set_selected (source, i);
      wait_idle (f);
      g_assert_cmpstr (adw_preferences_row_get_title (child (f, "path_row")), ==,
                       k->path_is_folder ? "Folder" : "File");
      g_assert_cmpint (gtk_widget_get_visible (child (f, "label_column_row")), ==,
                       (k->uses & (NL_DATASET_USES_LABEL_COLUMN | NL_DATASET_USES_TEXT_COLUMN)) != 0);
      /* the sequence options where the kind's row reads them */
      g_assert_cmpint (gtk_widget_get_visible (child (f, "text_group")), ==, (k->uses & NL_DATASET_USES_TEXT) != 0);
      g_assert_cmpint (gtk_widget_get_visible (child (f, "text_column_row")), ==,
                       (k->uses & NL_DATASET_USES_TEXT_COLUMN) != 0);
      g_assert_cmpint (gtk_widget_get_visible (child (f, "series_group")), ==,
                       (k->uses & NL_DATASET_USES_SERIES) != 0);
      g_assert_cmpint (gtk_widget_get_sensitive (child (f, "split_spin")), ==, (k->uses & NL_DATASET_USES_SPLIT) != 0);
    }
}

/* every part of the sequence preview got at least its minimum height (no
 * overlap with what follows) */
static gboolean
sequence_laid_out (gpointer data)
{
  Fixture *f = data;
  for (GtkWidget *w = gtk_widget_get_first_child (child (f, "sequence_box")); w; w = gtk_widget_get_next_sibling (w))
    {
      int min;
      gtk_widget_measure (w, GTK_ORIENTATION_VERTICAL, gtk_widget_get_width (w), &min, NULL, NULL, NULL);
      if (gtk_widget_get_height (w) < min || gtk_widget_get_width (w) <= 0)
        return FALSE;
    }
  return TRUE;
}

static int
kind_index (const char *name)
{
  int n;
  const NlDatasetKind *kinds = nl_dataset_kinds (&n);
  for (int i = 0; i < n; i++)
    if (strcmp (kinds[i].name, name) == 0)
      return i;
  g_error ("no dataset kind %s", name);
}

static void
choose_file (Fixture *f, const char *kind, const char *path)
{
  g_autoptr (GFile) file = g_file_new_for_path (path);
  /* the sample pipeline's image transforms do not fit sequences */
  for (;;)
    {
      g_autoptr (NlPipelineInfo) pl = nl_data_page_dup_pipeline (f->page);
      if (!pl->transforms || !*pl->transforms)
        break;
      activate (f, "data.transform-remove", g_variant_new_int32 (0));
    }
  adw_combo_row_set_selected (child (f, "source_row"), kind_index (kind));
  gtk_spin_button_set_value (child (f, "split_spin"), 0);
  nl_data_page_set_source_file (f->page, file);
  wait_idle (f);
}

static gboolean
markup_has (GtkWidget *label, const char *what)
{
  return GTK_IS_LABEL (label) && strstr (gtk_label_get_label (GTK_LABEL (label)), what) != NULL;
}

/* A text table: 40 rows of 1..12 words, "the" twice in each, one word of
 * its own in each (seen once: <unk> with a minimum count of 2). The
 * preview shows the samples with that word marked, the length histogram
 * with its truncation point, "the" first among the tokens, and how many
 * samples max_length cuts, counted here from the file. */
static void
test_text_preview (Fixture *f, gconstpointer data)
{
  g_autofree char *csv = g_build_filename (f->dir, "reviews.csv", NULL);
  GString *s = g_string_new ("text,label\n");
  int cut = 0, max_length = 6;
  NlDataPreview *p;
  GtkWidget *hist, *summary, *top;
  g_autofree char *want = NULL, *top_want = NULL;
  int marked = 0;

  for (int i = 0; i < 40; i++)
    {
      int words = 3 + i % 12; /* the, the, rare, then filler */
      g_string_append_printf (s, "\"the the quokka%d", i);
      for (int k = 3; k < words; k++)
        g_string_append (s, k % 2 ? " good" : " film");
      g_string_append_printf (s, "\",%s\n", i % 2 ? "pos" : "neg");
      cut += words > max_length;
    }
  g_assert_true (g_file_set_contents (csv, s->str, -1, NULL));
  g_string_free (s, TRUE);
  gtk_spin_button_set_value (child (f, "max_length_spin"), max_length);
  gtk_spin_button_set_value (child (f, "min_count_spin"), 2);
  choose_file (f, "text", csv);
  g_assert_cmpstr (nl_data_page_get_error (f->page), ==, NULL);
  p = nl_data_page_get_preview (f->page);
  g_assert_nonnull (p);
  g_assert_nonnull (p->text);
  g_assert_true (gtk_widget_get_visible (child (f, "text_group")));
  g_assert_false (gtk_widget_get_visible (child (f, "series_group")));
  /* no image tiles: the text preview instead */
  g_assert_cmpint (n_children (child (f, "preview_grid")), ==, 0);
  summary = nl_data_page_get_part (f->page, "text-summary");
  want = g_strdup_printf ("%d samples longer than %d tokens are cut", cut, max_length);
  g_assert_true (markup_has (summary, want));
  hist = nl_data_page_get_part (f->page, "length-histogram");
  g_assert_nonnull (hist);
  g_assert_cmpfloat (nl_sequence_plot_get_mark_x (NL_SEQUENCE_PLOT (hist)), >, 0);
  g_assert_cmpfloat (nl_test_drawn_fraction (hist), >, 0.01);
  /* "the" twice per row */
  top = nl_data_page_get_part (f->page, "top-tokens");
  top_want = g_strdup_printf ("<tt>the</tt> %d", 80);
  g_assert_true (markup_has (top, top_want));
  /* each shown sample's own word is marked as <unk> */
  for (GtkWidget *w = gtk_widget_get_first_child (gtk_widget_get_parent (summary)); w;
       w = gtk_widget_get_next_sibling (w))
    if (g_strcmp0 (gtk_widget_get_name (w), "text-sample") == 0)
      {
        const char *m = gtk_label_get_label (GTK_LABEL (w));
        const char *at = strstr (m, "underline=\"error\"");
        g_assert_nonnull (at);
        g_assert_true (g_str_has_prefix (strchr (at, '>') + 1, "quokka"));
        g_assert_null (strstr (strchr (at, '>'), "<span")); /* one per sample */
        marked++;
      }
  g_assert_cmpint (marked, ==, MIN (p->n_samples, 8));
  g_assert_true (nl_test_wait_until (sequence_laid_out, f, 5000));
  /* the options go into the pipeline's extra_json */
  {
    g_autoptr (NlPipelineInfo) pl = nl_data_page_dup_pipeline (f->page);
    NlPipelineExtra x;
    g_assert_true (nl_pipeline_extra_parse (pl->extra_json, &x, NULL));
    g_assert_cmpint (x.max_length, ==, max_length);
    g_assert_cmpint (x.min_count, ==, 2);
    g_assert_cmpint (x.vocab_size, ==, 0); /* the default, left to the kind */
    nl_pipeline_extra_clear (&x);
  }
  nl_test_save_shot (GTK_WIDGET (f->win), "text-preview.png");
}

/* A series: the plot of its target with the first window and horizon, and
 * the summary saying what a sample reads and predicts. */
static void
test_series_preview (Fixture *f, gconstpointer data)
{
  g_autofree char *csv = g_build_filename (f->dir, "wave.csv", NULL);
  GString *s = g_string_new ("t,load\n");
  GtkWidget *plot, *summary;
  NlDataPreview *p;

  for (int i = 0; i < 300; i++)
    g_string_append_printf (s, "%d,%.5f\n", i, sin (i / 7.0) + 0.01 * i);
  g_assert_true (g_file_set_contents (csv, s->str, -1, NULL));
  g_string_free (s, TRUE);
  gtk_spin_button_set_value (child (f, "window_spin"), 24);
  gtk_spin_button_set_value (child (f, "horizon_spin"), 4);
  choose_file (f, "series", csv);
  g_assert_cmpstr (nl_data_page_get_error (f->page), ==, NULL);
  p = nl_data_page_get_preview (f->page);
  g_assert_nonnull (p);
  g_assert_nonnull (p->series);
  g_assert_true (gtk_widget_get_visible (child (f, "series_group")));
  summary = nl_data_page_get_part (f->page, "series-summary");
  g_assert_true (markup_has (summary, "<b>load</b> over 300 rows"));
  g_assert_true (markup_has (summary, "reads 24 rows"));
  g_assert_true (markup_has (summary, "the next 4 values"));
  plot = nl_data_page_get_part (f->page, "series-plot");
  g_assert_nonnull (plot);
  /* the window's end: 24 of 300 rows along the plot */
  g_assert_cmpfloat (nl_sequence_plot_get_mark_x (NL_SEQUENCE_PLOT (plot)), >, 12);
  g_assert_cmpfloat (nl_sequence_plot_get_mark_x (NL_SEQUENCE_PLOT (plot)), <, gtk_widget_get_width (plot) * 0.2);
  g_assert_cmpfloat (nl_test_drawn_fraction (plot), >, 0.01);
  g_assert_true (nl_test_wait_until (sequence_laid_out, f, 5000));
  nl_test_save_shot (GTK_WIDGET (f->win), "series-preview.png");
}

int
main (int argc, char **argv)
{
  nl_test_gui_init (&argc, &argv);
  if (!g_file_test ("/usr/share/datasets/fashion-mnist", G_FILE_TEST_IS_DIR))
    {
      printf ("1..0 # SKIP Fashion-MNIST is not installed\n");
      return 77;
    }
#define ADD(name, fn) g_test_add ("/data-page/" name, Fixture, NULL, fixture_setup, fn, fixture_teardown)
  ADD ("preview", test_preview);
  ADD ("save", test_save);
  ADD ("transforms", test_transforms);
  ADD ("csv-and-errors", test_csv_and_errors);
  ADD ("new-delete-drafts", test_new_delete_drafts);
  ADD ("kinds", test_kinds);
  ADD ("text-preview", test_text_preview);
  ADD ("series-preview", test_series_preview);
#undef ADD
  return g_test_run ();
}
