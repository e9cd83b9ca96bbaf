/* test-data-preview.c — the Data page's engine side: previews of
 * Fashion-MNIST, a CSV and an image folder checked against the datasets
 * read directly (samples, labels, histograms by brute force), transforms
 * deterministic by seed, reuse of the open dataset, errors that name the
 * file, the transform catalogue against nl_transform_parse, source specs
 * and the pipeline options in extra_json. */
#include <glib/gstdio.h>
#include <math.h>
#include <png.h>
#include <string.h>

#include "engine/data/nl-dataset.h"
#include "engine/data/nl-transform.h"
#include "engine/session/nl-data-preview.h"
#include "nl-test-util.h"

#define FASHION_DIR "/usr/share/datasets/fashion-mnist"

static char *tmp_dir;

static NlDataPreview *
load (const char *spec, const char *transforms, double split, const char *extra, int n, guint64 seed,
      NlDataPreview *previous, GError **error)
{
  NlPipelineInfo pl = { .name = (char *) "t", .dataset_spec = (char *) spec, .transforms = (char *) transforms,
                        .split = split, .batch_size = 32, .workers = 1, .extra_json = (char *) extra };
  return nl_data_preview_load (&pl, n, seed, previous, NULL, error);
}

static gboolean
have_fashion (void)
{
  g_autofree char *f = g_build_filename (FASHION_DIR, "train-labels-idx1-ubyte.gz", NULL);
  if (g_file_test (f, G_FILE_TEST_EXISTS))
    return TRUE;
  g_test_skip ("Fashion-MNIST is not installed in " FASHION_DIR);
  return FALSE;
}

/* the histogram against every label read through the dataset API */
static void
assert_histogram (const NlDataPreview *p, NlDataset *ds)
{
  g_autofree int64_t *count = g_new0 (int64_t, p->n_classes);
  g_autofree float *buf = g_new (float, nl_shape_numel (&ds->sample_shape));
  int64_t sum = 0;
  g_assert_cmpint (p->n_classes, ==, ds->n_classes);
  g_assert_cmpint (p->length, ==, ds->length);
  for (int64_t i = 0; i < ds->length; i++)
    {
      float label;
      g_assert_true (nl_dataset_get (ds, i, buf, &label, NULL));
      g_assert_true (label >= 0 && label < p->n_classes);
      count[(int) label]++;
    }
  for (int c = 0; c < p->n_classes; c++)
    {
      g_assert_cmpint (p->class_counts[c], ==, count[c]);
      sum += p->class_counts[c];
    }
  g_assert_cmpint (sum, ==, ds->length);
}

static void
test_fashion (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlDataPreview) p = NULL;
  g_autoptr (NlDataset) ds = NULL;
  g_autofree float *buf = g_new (float, 784);

  if (!have_fashion ())
    return;
  p = load ("fashion-mnist", NULL, 0, NULL, 32, 1, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (p->n_samples, ==, 32);
  g_assert_cmpint (p->length, ==, 60000);
  g_assert_true (p->has_test_set);
  g_assert_cmpint (p->shape.ndim, ==, 3);
  g_assert_cmpint (p->shape.d[0], ==, 1);
  g_assert_cmpint (p->shape.d[1], ==, 28);
  g_assert_cmpint (p->shape.d[2], ==, 28);
  g_assert_true (nl_shape_equal (&p->shape, &p->sample_shape));
  g_assert_cmpint (p->n_classes, ==, 10);
  g_assert_cmpuint (g_strv_length (p->class_names), ==, 10);
  g_assert_cmpstr (p->class_names[0], ==, "T-shirt/top");
  g_assert_cmpstr (p->class_names[9], ==, "Ankle boot");
  g_assert_cmpstr (p->transforms, ==, "identity");

  /* each sample is the dataset's, untouched, with its label */
  ds = nl_dataset_open ("fashion-mnist", TRUE, &error);
  g_assert_no_error (error);
  for (int i = 0; i < p->n_samples; i++)
    {
      float label;
      g_autofree char *text = nl_data_preview_label_text (p, i);
      g_assert_true (p->indices[i] >= 0 && p->indices[i] < 60000);
      if (i)
        g_assert_cmpint (p->indices[i], >, p->indices[i - 1]); /* distinct, ascending */
      g_assert_true (p->labels[i] >= 0 && p->labels[i] <= 9 && p->labels[i] == floorf (p->labels[i]));
      g_assert_true (nl_dataset_get (ds, p->indices[i], buf, &label, NULL));
      g_assert_cmpfloat (label, ==, p->labels[i]);
      g_assert_cmpmem (buf, 784 * sizeof (float), nl_data_preview_sample (p, i), 784 * sizeof (float));
      g_assert_cmpstr (text, ==, p->class_names[(int) label]);
    }
  assert_histogram (p, ds);
  /* Fashion-MNIST's training set is balanced */
  for (int c = 0; c < 10; c++)
    g_assert_cmpint (p->class_counts[c], ==, 6000);
}

static gboolean
same_samples (const NlDataPreview *a, const NlDataPreview *b)
{
  gsize n = (gsize) a->n_samples * nl_shape_numel (&a->shape);
  return a->n_samples == b->n_samples && nl_shape_equal (&a->shape, &b->shape)
         && memcmp (a->indices, b->indices, sizeof (int64_t) * a->n_samples) == 0
         && memcmp (a->samples, b->samples, n * sizeof (float)) == 0;
}

static void
test_transforms_by_seed (void)
{
  g_autoptr (GError) error = NULL;
  const char *aug = "random-crop:28:4,flip";
  g_autoptr (NlDataPreview) plain = NULL, a = NULL, b = NULL, c = NULL, crop = NULL, norm = NULL;
  gint64 t0;
  double reuse_s;

  if (!have_fashion ())
    return;
  plain = load ("fashion-mnist", "", 0, NULL, 32, 7, NULL, &error);
  g_assert_no_error (error);
  /* with the open dataset of the previous preview, only samples are made */
  t0 = g_get_monotonic_time ();
  a = load ("fashion-mnist", aug, 0, NULL, 32, 7, plain, &error);
  reuse_s = (g_get_monotonic_time () - t0) / 1e6;
  g_assert_no_error (error);
  g_assert_true (a->source == plain->source);
  g_test_message ("first preview %.3f s, with the dataset reused %.4f s", plain->seconds, reuse_s);
  b = load ("fashion-mnist", aug, 0, NULL, 32, 7, NULL, &error);
  g_assert_no_error (error);
  c = load ("fashion-mnist", aug, 0, NULL, 32, 8, a, &error);
  g_assert_no_error (error);

  /* same seed: same indices as without transforms, but other pixels */
  g_assert_cmpmem (a->indices, 32 * sizeof (int64_t), plain->indices, 32 * sizeof (int64_t));
  g_assert_false (same_samples (a, plain));
  g_assert_cmpstr (a->transforms, ==, "random-crop:28x28:4,flip");
  /* deterministic: a fresh load with that seed gives the same samples */
  g_assert_true (same_samples (a, b));
  /* another seed: other samples */
  g_assert_false (same_samples (a, c));
  for (gsize i = 0; i < 32 * 784; i++)
    g_assert_true (a->samples[i] >= 0 && a->samples[i] <= 1);

  crop = load ("fashion-mnist", "center-crop:20", 0, NULL, 5, 7, a, &error);
  g_assert_no_error (error);
  g_assert_cmpint (crop->n_samples, ==, 5);
  g_assert_cmpint (crop->shape.d[1], ==, 20);
  g_assert_cmpint (crop->shape.d[2], ==, 20);
  g_assert_cmpint (crop->sample_shape.d[1], ==, 28);

  /* normalised values are mapped back into [0, 1] for display */
  norm = load ("fashion-mnist", "normalize:0.2860:0.3530", 0, NULL, 8, 7, a, &error);
  g_assert_no_error (error);
  g_assert_cmpfloat (norm->value_min, <, -0.5);
  g_assert_cmpfloat (norm->value_max, >, 1.5);
  for (gsize i = 0; i < 8 * 784; i++)
    g_assert_true (norm->samples[i] >= 0 && norm->samples[i] <= 1);
}

static char *
write_csv (const char *name, const char *text)
{
  char *path = g_build_filename (tmp_dir, name, NULL);
  g_assert_true (g_file_set_contents (path, text, -1, NULL));
  return path;
}

static void
test_csv (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GString) s = g_string_new ("a,b,c,label\n");
  g_autofree char *path = NULL, *spec = NULL;
  g_autoptr (NlDataPreview) p = NULL, r = NULL;
  g_autoptr (NlDataset) ds = NULL;
  NlDatasetOptions opts = { .val_fraction = 0.25 };

  for (int i = 0; i < 20; i++)
    g_string_append_printf (s, "%d,%g,%d,%d\n", i, i * 0.5, 100 - i, i % 3 == 2 ? 2 : i % 2);
  path = write_csv ("t.csv", s->str);
  spec = g_strdup_printf ("csv:%s", path);
  p = load (spec, NULL, 0.25, NULL, 32, 3, NULL, &error);
  g_assert_no_error (error);
  g_assert_false (p->has_test_set);
  g_assert_cmpint (p->length, ==, 15); /* 5 of 20 held out */
  g_assert_cmpint (p->n_samples, ==, 15);
  g_assert_cmpint (p->shape.ndim, ==, 1);
  g_assert_cmpint (p->shape.d[0], ==, 3);
  g_assert_cmpint (p->n_classes, ==, 3);
  g_assert_cmpstr (p->class_names[2], ==, "2");
  ds = nl_dataset_open_full (spec, TRUE, &opts, &error);
  g_assert_no_error (error);
  assert_histogram (p, ds);
  /* features are not an image: mapped from their range */
  g_assert_cmpfloat (p->value_min, <, 10);
  g_assert_cmpfloat (p->value_max, >, 90);

  /* regression: no classes, labels as numbers */
  r = load (spec, NULL, 0, "{\"regression\":true,\"label_column\":\"a\"}", 4, 3, p, &error);
  g_assert_no_error (error);
  g_assert_true (r->source != p->source);
  g_assert_cmpint (r->n_classes, ==, 0);
  g_assert_null (r->class_counts);
  g_assert_cmpint (r->length, ==, 20);
  {
    g_autofree char *text = nl_data_preview_label_text (r, 1);
    g_assert_cmpfloat (g_ascii_strtod (text, NULL), ==, r->labels[1]);
    g_assert_cmpfloat (r->labels[1], ==, (float) r->indices[1]); /* column a is the row number */
  }
}

static void
write_png (const char *path, int shade)
{
  guint8 px[4 * 6 * 3];
  png_image pi;
  memset (&pi, 0, sizeof pi);
  pi.version = PNG_IMAGE_VERSION;
  pi.width = 4;
  pi.height = 6;
  pi.format = PNG_FORMAT_RGB;
  memset (px, shade, sizeof px);
  g_assert_true (png_image_write_to_file (&pi, path, 0, px, 0, NULL));
}

/* the folder histogram comes from the listing: it must agree with the
 * dataset on both split settings */
static void
test_folder (void)
{
  const char *classes[] = { "ant", "bee", "cat" };
  int per_class[] = { 5, 2, 9 };
  g_autofree char *root = g_build_filename (tmp_dir, "imgs", NULL);
  g_autofree char *spec = g_strdup_printf ("folder:%s", root);

  for (int c = 0; c < 3; c++)
    {
      g_autofree char *dir = g_build_filename (root, classes[c], NULL);
      g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
      for (int k = 0; k < per_class[c]; k++)
        {
          g_autofree char *name = g_strdup_printf ("%d.png", k);
          g_autofree char *f = g_build_filename (dir, name, NULL);
          write_png (f, 40 * c + k);
        }
      {
        g_autofree char *junk = g_build_filename (dir, "notes.txt", NULL);
        g_assert_true (g_file_set_contents (junk, "x", -1, NULL));
      }
    }
  for (int v = 0; v < 2; v++)
    {
      g_autoptr (GError) error = NULL;
      NlDatasetOptions opts = { .val_fraction = v ? 0.3 : 0 };
      g_autoptr (NlDataPreview) p = load (spec, "", opts.val_fraction, NULL, 32, 1, NULL, &error);
      g_autoptr (NlDataset) ds = NULL;
      g_assert_no_error (error);
      ds = nl_dataset_open_full (spec, TRUE, &opts, &error);
      g_assert_no_error (error);
      g_assert_cmpint (p->length, ==, v ? 11 : 16);
      g_assert_cmpint (p->shape.d[0], ==, 3);
      g_assert_cmpstr (p->class_names[1], ==, "bee");
      assert_histogram (p, ds);
    }
}

static void
assert_error_names (const char *spec, const char *transforms, const char *needle, int code)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlDataPreview) p = load (spec, transforms, 0.1, NULL, 8, 0, NULL, &error);
  g_assert_null (p);
  g_assert_error (error, NL_DATA_ERROR, code);
  g_test_message ("%s: %s", spec, error->message);
  g_assert_nonnull (strstr (error->message, needle));
}

static void
test_errors (void)
{
  g_autofree char *missing = g_build_filename (tmp_dir, "missing.csv", NULL);
  g_autofree char *bad = write_csv ("bad.csv", "x,y\n1,2\n3,abc\n");
  g_autofree char *fdir = g_build_filename (tmp_dir, "bad-fashion", NULL);
  g_autofree char *images = g_build_filename (fdir, "train-images-idx3-ubyte", NULL);
  g_autofree char *labels = g_build_filename (fdir, "train-labels-idx1-ubyte", NULL);
  g_autofree char *s1 = g_strdup_printf ("csv:%s", missing);
  g_autofree char *s2 = g_strdup_printf ("csv:%s", bad);
  g_autofree char *s3 = g_strdup_printf ("fashion-mnist:%s", fdir);
  g_autofree char *good = write_csv ("good.csv", "1,2,0\n3,4,1\n5,6,1\n");
  g_autofree char *s4 = g_strdup_printf ("csv:%s", good);
  g_autoptr (GCancellable) cancel = g_cancellable_new ();
  g_autoptr (GError) error = NULL;
  NlPipelineInfo pl = { .dataset_spec = s4 };

  g_assert_cmpint (g_mkdir_with_parents (fdir, 0755), ==, 0);
  g_assert_true (g_file_set_contents (images, "not an idx file at all", -1, NULL));
  g_assert_true (g_file_set_contents (labels, "\0\0\10\1\0\0\0\1\3", 9, NULL));

  assert_error_names (s1, NULL, missing, NL_DATA_ERROR_NOT_FOUND);
  assert_error_names (s2, NULL, bad, NL_DATA_ERROR_CORRUPT);
  assert_error_names (s3, NULL, images, NL_DATA_ERROR_CORRUPT);
  assert_error_names ("nonsense:x", NULL, "nonsense", NL_DATA_ERROR_SPEC);
  assert_error_names (s4, "flip,bogus:3", "bogus", NL_DATA_ERROR_SPEC);
  /* a 1-d CSV sample cannot be cropped */
  assert_error_names (s4, "center-crop:2", "center-crop", NL_DATA_ERROR_SPEC);
  if (have_fashion ())
    assert_error_names ("fashion-mnist", "normalize:0.5/0.5/0.5:0.2/0.2/0.2", "normalize", NL_DATA_ERROR_SPEC);

  g_cancellable_cancel (cancel);
  g_assert_null (nl_data_preview_load (&pl, 4, 0, NULL, cancel, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
}

/* the catalogue must list what the parser accepts, with defaults it accepts */
static void
test_catalog (void)
{
  int n;
  const NlTransformSpecInfo *all = nl_data_transforms (&n);
  g_autoptr (GError) error = NULL;
  g_autoptr (NlTransform) none = nl_transform_parse ("no-such-transform", &error);
  NlShape rgb = nl_shape_of (3, (int64_t) 3, (int64_t) 32, (int64_t) 24);

  g_assert_null (none);
  g_assert_cmpint (n, ==, 8);
  for (int i = 0; i < n; i++)
    {
      g_autoptr (NlTransformStep) step = nl_transform_step_new (&all[i], NULL);
      g_autoptr (NlTransformStep) sized = nl_transform_step_new (&all[i], &rgb);
      g_autofree char *text = nl_transform_step_to_string (step);
      g_autofree char *text2 = nl_transform_step_to_string (sized);
      g_autofree char *problem = nl_transform_spec_problem (text);
      g_autofree char *problem2 = nl_transform_spec_problem (text2);
      g_assert_null (problem);
      g_assert_null (problem2);
      /* the parser's list of known transforms names every entry */
      g_assert_nonnull (strstr (error->message, all[i].name));
      g_assert_true (nl_data_transform_lookup (all[i].name) == &all[i]);
      for (int k = 0; k < all[i].n_params; k++)
        if (all[i].params[k].type == NL_TRANSFORM_PARAM_SIZE)
          g_assert_cmpstr (sized->values[k], ==, "24x32");
    }
  g_assert_null (nl_data_transform_lookup ("nope"));

  {
    const char *spec = "random-crop:28:4,flip,normalize:0.1/0.2:0.3/0.4,random-crop:30";
    g_autoptr (GPtrArray) steps = nl_transform_steps_parse (spec, &error);
    g_autofree char *back = NULL;
    g_clear_error (&error);
    g_assert_nonnull (steps);
    g_assert_cmpint (steps->len, ==, 4);
    g_assert_cmpstr (((NlTransformStep *) steps->pdata[2])->values[1], ==, "0.3/0.4");
    g_assert_cmpstr (((NlTransformStep *) steps->pdata[3])->values[1], ==, "");
    back = nl_transform_steps_to_spec (steps);
    g_assert_cmpstr (back, ==, spec);
  }
  {
    g_autoptr (GPtrArray) empty = nl_transform_steps_parse ("  ", &error);
    g_autoptr (GPtrArray) bad = NULL;
    g_autofree char *problem = nl_transform_spec_problem ("brightness:2");
    g_assert_cmpint (empty->len, ==, 0);
    bad = nl_transform_steps_parse ("flip,brightness:2", &error);
    g_assert_null (bad);
    g_assert_error (error, NL_DATA_ERROR, NL_DATA_ERROR_SPEC);
    g_assert_nonnull (strstr (error->message, "brightness:2"));
    g_assert_nonnull (problem);
  }
}

/* the text preview against counts made by hand */
static void
test_text_preview (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *path = write_csv ("texts.csv", "text,label\nthe cat sat,a\nthe dog sat on the mat,b\n"
                                                  "the the the the the the the the the the,a\nzebra,b\n");
  g_autofree char *spec = g_strconcat ("text:", path, NULL);
  g_autoptr (NlDataPreview) p = load (spec, NULL, 0, "{\"max_length\":4,\"min_count\":2}", 8, 1, NULL, &error);
  g_assert_no_error (error);
  NlTextPreview *t = p->text;
  g_assert_nonnull (t);
  g_assert_null (p->series);
  g_assert_false (t->language_model);
  g_assert_cmpint (t->vocab_size, ==, 4); /* <pad> <unk> the sat */
  g_assert_cmpint (t->max_length, ==, 4);
  g_assert_cmpint (t->n_tokens, ==, 20);
  g_assert_cmpint (t->unk_count, ==, 5);
  g_assert_cmpint (t->n_truncated, ==, 2);
  g_assert_cmpint (t->longest, ==, 10);
  g_assert_cmpint (t->bin_width, ==, 1);
  g_assert_cmpint (t->n_bins, ==, 11);
  const int64_t bins[11] = { 0, 1, 0, 1, 0, 0, 1, 0, 0, 0, 1 };
  g_assert_cmpmem (t->bins, sizeof bins, bins, sizeof bins);
  g_assert_cmpint (t->n_top, ==, 7);
  const char *top[] = { "the", "sat", "cat", "dog", "mat", "on", "zebra" };
  const int64_t top_counts[] = { 13, 2, 1, 1, 1, 1, 1 };
  for (int i = 0; i < 7; i++)
    {
      g_assert_cmpstr (t->top[i].token, ==, top[i]);
      g_assert_cmpint (t->top[i].count, ==, top_counts[i]);
    }
  g_assert_cmpint (p->n_classes, ==, 2);
  g_assert_cmpint (p->class_counts[0], ==, 2);
  g_assert_cmpint (p->n_samples, ==, 4);
  g_assert_cmpint (t->n_samples, ==, 4);
  g_assert_cmpint (p->indices[1], ==, 1);
  NlTextSamplePreview *s0 = &t->samples[0], *s1 = &t->samples[1];
  g_assert_cmpstrv (s0->tokens, ((const char *[]) { "the", "cat", "sat", NULL }));
  g_assert_true (!s0->unknown[0] && s0->unknown[1] && !s0->unknown[2]);
  g_assert_cmpint (s1->n_tokens, ==, 4);
  g_assert_cmpint (s1->n_total, ==, 6);
  g_assert_cmpstrv (s1->tokens, ((const char *[]) { "the", "dog", "sat", "on", NULL }));

  /* a language model: no class histogram, every window max_length long */
  g_autofree char *txt = write_csv ("story.txt", "abcdefghijklmnopqrstuvwxyz");
  g_autofree char *lm_spec = g_strconcat ("text-lm:", txt, NULL);
  g_autoptr (NlDataPreview) lm = load (lm_spec, NULL, 0.25, "{\"tokenizer\":\"char\",\"max_length\":5}", 2, 1,
                                       NULL, &error);
  g_assert_no_error (error);
  g_assert_true (lm->text->language_model);
  g_assert_cmpint (lm->n_classes, ==, 0);
  g_assert_cmpint (lm->length, ==, 4); /* 25 / 5 = 5 windows, 1 held out */
  g_assert_cmpint (lm->text->n_truncated, ==, 0);
  g_assert_cmpint (lm->text->bins[5], ==, 4);
  g_assert_cmpint (lm->text->samples[0].n_tokens, ==, 5);
}

/* the series preview: decimated values and the split row */
static void
test_series_preview (void)
{
  g_autoptr (GError) error = NULL;
  GString *s = g_string_new ("x,y\n");
  for (int i = 0; i < 5000; i++)
    g_string_append_printf (s, "%d,%d\n", i % 7, i);
  g_autofree char *path = write_csv ("series.csv", s->str);
  g_string_free (s, TRUE);
  g_autofree char *spec = g_strconcat ("series:", path, NULL);
  g_autoptr (NlDataPreview) p = load (spec, NULL, 0.2, "{\"window\":10,\"horizon\":3,\"target\":\"y\"}", 4, 1,
                                      NULL, &error);
  g_assert_no_error (error);
  NlSeriesPreview *sp = p->series;
  g_assert_nonnull (sp);
  g_assert_null (p->text);
  g_assert_cmpstr (sp->target, ==, "y");
  g_assert_cmpint (sp->n_rows, ==, 5000);
  g_assert_cmpint (sp->stride, ==, 3);
  g_assert_cmpint (sp->n_values, ==, 1667);
  g_assert_cmpfloat (sp->values[1666], ==, 4998);
  g_assert_cmpfloat (sp->values[10], ==, 30);
  g_assert_cmpint (sp->window, ==, 10);
  g_assert_cmpint (sp->horizon, ==, 3);
  /* 4988 windows, 998 held out: training labels end at row 3990 + 12 - 1 */
  g_assert_cmpint (sp->val_start_row, ==, 4002);
  g_assert_cmpint (p->length, ==, 3990);
  g_assert_cmpint (sp->n_columns, ==, 2);
  g_assert_cmpstrv (sp->columns, ((const char *[]) { "x", "y", NULL }));
  g_assert_cmpint (p->n_classes, ==, 0);
}

static void
test_sources_and_extra (void)
{
  int n;
  const NlDatasetKind *kinds = nl_dataset_kinds (&n);
  g_autofree char *path = NULL;
  g_autoptr (GError) error = NULL;
  NlPipelineExtra x;

  g_assert_cmpint (n, ==, 9);
  for (int i = 0; i < n; i++)
    {
      g_autofree char *spec = nl_dataset_kind_spec (&kinds[i], "/a/b:c");
      g_autofree char *bare = nl_dataset_kind_spec (&kinds[i], NULL);
      g_autofree char *p = NULL;
      g_assert_cmpint (nl_dataset_kind_index (nl_dataset_kind_lookup (spec, &p)), ==, i);
      g_assert_cmpstr (p, ==, "/a/b:c");
      g_assert_cmpstr (bare, ==, kinds[i].name);
    }
  g_assert_cmpint (nl_dataset_kind_index (nl_dataset_kind_lookup ("fashion-mnist", &path)), ==, 0);
  g_assert_null (path);
  g_assert_cmpint (nl_dataset_kind_index (nl_dataset_kind_lookup ("CSV:/x.csv", NULL)), ==, 3);
  g_assert_cmpint (nl_dataset_kind_index (nl_dataset_kind_lookup ("mnistx", NULL)), ==, -1);
  g_assert_cmpint (nl_dataset_kind_index (nl_dataset_kind_lookup ("svhn:/x", NULL)), ==, -1);
  g_assert_true ((kinds[3].uses & NL_DATASET_USES_SPLIT) && !(kinds[0].uses & NL_DATASET_USES_SPLIT)
                 && kinds[0].default_path && !kinds[3].default_path);

  g_assert_true (nl_pipeline_extra_parse (NULL, &x, &error));
  g_assert_true (x.shuffle);
  g_assert_true (nl_pipeline_extra_parse ("{\"shuffle\":false,\"label_column\":2,\"keep\":[1,2]}", &x, &error));
  g_assert_false (x.shuffle);
  g_assert_cmpstr (x.label_column, ==, "2");
  {
    g_autofree char *json = NULL;
    NlPipelineExtra y;
    x.image_width = 16;
    json = nl_pipeline_extra_to_json (&x, "{\"shuffle\":false,\"label_column\":2,\"keep\":[1,2]}");
    g_assert_nonnull (strstr (json, "\"keep\""));  /* unknown members survive */
    g_assert_true (nl_pipeline_extra_parse (json, &y, &error));
    g_assert_false (y.shuffle);
    g_assert_cmpstr (y.label_column, ==, "2");
    g_assert_cmpint (y.image_width, ==, 16);
    g_assert_cmpint (y.image_height, ==, 0);
    nl_pipeline_extra_clear (&y);
  }
  nl_pipeline_extra_clear (&x);
  /* the text and series options round trip */
  {
    g_autofree char *json = NULL;
    NlPipelineExtra y;
    NlDatasetOptions o;
    g_assert_true (nl_pipeline_extra_parse ("{\"text_column\":\"body\",\"tokenizer\":\"char\",\"vocab_size\":50,"
                                            "\"min_count\":2,\"max_length\":64,\"target\":\"t\",\"window\":8,"
                                            "\"horizon\":2}", &x, &error));
    json = nl_pipeline_extra_to_json (&x, NULL);
    g_assert_true (nl_pipeline_extra_parse (json, &y, &error));
    nl_pipeline_extra_to_options (&y, 0.5, &o);
    g_assert_cmpstr (o.text_column, ==, "body");
    g_assert_cmpint (o.tokenizer, ==, NL_TOKENIZER_CHAR);
    g_assert_cmpint (o.vocab_size, ==, 50);
    g_assert_cmpint (o.min_count, ==, 2);
    g_assert_cmpint (o.max_length, ==, 64);
    g_assert_cmpstr (o.target_column, ==, "t");
    g_assert_cmpint (o.window, ==, 8);
    g_assert_cmpint (o.horizon, ==, 2);
    g_assert_cmpfloat (o.val_fraction, ==, 0.5);
    nl_pipeline_extra_clear (&x);
    nl_pipeline_extra_clear (&y);
    g_assert_false (nl_pipeline_extra_parse ("{\"tokenizer\":\"bpe\"}", &x, &error));
    g_assert_nonnull (strstr (error->message, "tokenizer"));
    g_clear_error (&error);
    g_assert_false (nl_pipeline_extra_parse ("{\"window\":\"8\"}", &x, &error));
    g_clear_error (&error);
  }
  g_assert_false (nl_pipeline_extra_parse ("{\"shuffle\":\"yes\"}", &x, &error));
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "shuffle"));
  g_clear_error (&error);
  g_assert_false (nl_pipeline_extra_parse ("[1]", &x, &error));
  g_assert_nonnull (error);
  g_clear_error (&error);
  /* nesting past the shared limit is refused before json-glib recurses */
  {
    g_autofree char *deep = g_strnfill (80000, '[');
    g_autofree char *kept = NULL;
    g_assert_false (nl_pipeline_extra_parse (deep, &x, &error));
    g_assert_nonnull (error);
    g_assert_nonnull (strstr (error->message, "the pipeline's extra options: JSON nested more than 256 levels deep"));
    g_clear_error (&error);
    /* as a base to write over: not read, the options written fresh */
    kept = nl_pipeline_extra_to_json (&x, deep);
    g_assert_nonnull (kept);
    g_assert_true (kept[0] == '{');
  }

  {
    const int64_t v[] = { 0, 7, 999, 1000, 60000, 1234567, -4500 };
    const char *const want[] = { "0", "7", "999", "1,000", "60,000", "1,234,567", "-4,500" };
    for (guint i = 0; i < G_N_ELEMENTS (v); i++)
      {
        g_autofree char *s = nl_data_format_count (v[i]);
        g_assert_cmpstr (s, ==, want[i]);
      }
  }
}

int
main (int argc, char **argv)
{
  int rc;
  g_test_init (&argc, &argv, NULL);
  tmp_dir = g_dir_make_tmp ("netloom-data-preview-XXXXXX", NULL);
  g_test_add_func ("/data-preview/fashion", test_fashion);
  g_test_add_func ("/data-preview/transforms-by-seed", test_transforms_by_seed);
  g_test_add_func ("/data-preview/csv", test_csv);
  g_test_add_func ("/data-preview/folder", test_folder);
  g_test_add_func ("/data-preview/errors", test_errors);
  g_test_add_func ("/data-preview/catalog", test_catalog);
  g_test_add_func ("/data-preview/sources-and-extra", test_sources_and_extra);
  g_test_add_func ("/data-preview/text", test_text_preview);
  g_test_add_func ("/data-preview/series", test_series_preview);
  rc = g_test_run ();
  nl_test_remove_tree (tmp_dir);
  g_free (tmp_dir);
  return rc;
}
