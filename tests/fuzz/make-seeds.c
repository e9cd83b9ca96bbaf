/* make-seeds.c — writes the generated seed inputs of the fuzz targets into
 * DIR/<target>/ (tests/fuzz/corpus): small valid files of every format, in
 * each target's input layout (see the fuzz-*.c). Run by tools/fuzz-run.sh
 * --seeds; the files are committed, so the corpora stay as they are unless
 * someone regenerates them. */
#include <glib/gstdio.h>
#include <jpeglib.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nl-fuzz.h"
#include "engine/data/nl-packed-dataset.h"
#include "engine/data/nl-record-writer.h"
#include "core/nl-algo-cache.h"
#include "core/nl-trace.h"
#include "engine/formats/nl-checkpoint.h"
#include "engine/formats/nl-int8-model.h"
#include "engine/train/nl-optim.h"
#include "engine/formats/onnx/nl-onnx-export.h"
#include "projects/nl-project.h"

static const char *out_dir;

static void
die (GError *error, const char *what)
{
  fprintf (stderr, "make-seeds: %s: %s\n", what, error ? error->message : "failed");
  exit (1);
}

static char *
seed_path (const char *target, const char *name)
{
  g_autofree char *dir = g_build_filename (out_dir, target, NULL);
  g_mkdir_with_parents (dir, 0755);
  return g_build_filename (dir, name, NULL);
}

static void
write_seed (const char *target, const char *name, const void *data, size_t size)
{
  g_autofree char *path = seed_path (target, name);
  g_autoptr (GError) error = NULL;
  if (!g_file_set_contents (path, data, (gssize) size, &error))
    die (error, path);
}

/* a seed of FLAGS, then data (the option byte of csv, image) */
static void
write_flagged (const char *target, const char *name, guint8 flags, const void *data, size_t size)
{
  g_autofree guint8 *buf = g_malloc (size + 1);
  buf[0] = flags;
  memcpy (buf + 1, data, size);
  write_seed (target, name, buf, size + 1);
}

static GBytes *
gzip_bytes (const void *data, size_t size)
{
  g_autoptr (GZlibCompressor) z = g_zlib_compressor_new (G_ZLIB_COMPRESSOR_FORMAT_GZIP, 9);
  g_autofree guint8 *out = g_malloc (size + 256);
  gsize read, written;
  if (g_converter_convert (G_CONVERTER (z), data, size, out, size + 256, G_CONVERTER_INPUT_AT_END, &read, &written,
                           NULL) != G_CONVERTER_FINISHED)
    die (NULL, "gzip");
  return g_bytes_new (out, written);
}

/* ---- IDX: 3 images of 4x4, labels 0..2 ---- */
static void
idx_seeds (void)
{
  guint8 images[16 + 3 * 16] = { 0, 0, 8, 3, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0, 4 };
  guint8 labels[8 + 3] = { 0, 0, 8, 1, 0, 0, 0, 3, 0, 1, 2 };
  for (int i = 0; i < 3 * 16; i++)
    images[16 + i] = (guint8) (i * 5);
  for (int gz = 0; gz < 4; gz++)
    {
      g_autoptr (GBytes) im = gz & 1 ? gzip_bytes (images, sizeof images) : g_bytes_new (images, sizeof images);
      g_autoptr (GBytes) lb = gz & 2 ? gzip_bytes (labels, sizeof labels) : g_bytes_new (labels, sizeof labels);
      gsize ni, nl;
      const guint8 *pi = g_bytes_get_data (im, &ni), *pl = g_bytes_get_data (lb, &nl);
      g_autoptr (GByteArray) seed = g_byte_array_new ();
      guint8 head[5] = { (guint8) (gz | (gz == 3 ? 10 << 2 : 0)), ni & 255, (ni >> 8) & 255, 0, 0 };
      g_byte_array_append (seed, head, 5);
      g_byte_array_append (seed, pi, ni);
      g_byte_array_append (seed, pl, nl);
      g_autofree char *name = g_strdup_printf ("seed-%s-%s", gz & 1 ? "gz" : "raw", gz & 2 ? "gz" : "raw");
      write_seed ("idx", name, seed->data, seed->len);
    }
}

/* ---- CIFAR: 2 records ---- */
static void
cifar_seeds (void)
{
  g_autofree guint8 *batch = g_malloc (2 * 3073);
  for (int r = 0; r < 2; r++)
    {
      batch[r * 3073] = (guint8) (r * 7);
      for (int i = 1; i < 3073; i++)
        batch[r * 3073 + i] = (guint8) (i * (r + 3));
    }
  write_seed ("cifar", "seed-2-records", batch, 2 * 3073);
}

/* ---- CSV ---- */
static void
csv_seeds (void)
{
  static const char with_header[] = "a,b,label\n0.5,1,0\n-2,3e2,1\n\n4,\"5\",2\n";
  static const char plain[] = "1;2;3\n4;5;6\n7;8;9\n";
  static const char tabs[] = "x\ty\n1.5\t0.25\n2.5\t-1\n";
  write_flagged ("csv", "seed-header", 0, with_header, strlen (with_header));
  write_flagged ("csv", "seed-label-name", 4, with_header, strlen (with_header));
  write_flagged ("csv", "seed-semicolon-split", 8 | 16 | 2, plain, strlen (plain));
  write_flagged ("csv", "seed-tabs-regression", 1, tabs, strlen (tabs));
}

/* ---- text, series, vocabularies ---- */
static void
sequence_seeds (void)
{
  static const char texts[] = "id,text,label\n1,\"Great film, loved it\",pos\n2,Dull and slow,neg\n"
                              "3,\"multi\nline \"\"quoted\"\"\",pos\n4,,neg\n5,Ünïcödé Straße 你好 🍕,neg\n";
  static const char tsv[] = "label\ttext\na\tone two\nb\tthree\na\tone\n";
  static const char story[] = "Once upon a time there was a cat.\nThe cat sat.\n\nThe end, é 🍕\n";
  static const char series[] = "date,a,b\nmon,1,2.5\ntue,2,3\nwed,3,-1\nthu,4,0\nfri,5,1e3\nsat,6,7\nsun,7,8\n";
  static const char vocab[] = "{\"format\":\"netloom.vocab\",\"version\":1,\"tokenizer\":\"word\","
                              "\"tokens\":[\"<pad>\",\"<unk>\",\"the\",\"cat\",\"sat\"]}";
  static const char cvocab[] = "{\"format\":\"netloom.vocab\",\"version\":1,\"tokenizer\":\"char\","
                               "\"tokens\":[\"<pad>\",\"<unk>\",\" \",\"e\",\"\\n\",\"\\\"\",\"é\"]}";
  write_flagged ("text", "seed-words", 0x10 | 4 | 8, texts, strlen (texts));
  write_flagged ("text", "seed-chars-small-vocab", 0x20 | 0x40 | 1, texts, strlen (texts));
  write_flagged ("text", "seed-tsv", 0x10, tsv, strlen (tsv));
  write_flagged ("text", "seed-lm-chars", 2 | 1 | 0x10 | 4 | 8, story, strlen (story));
  write_flagged ("text", "seed-lm-words", 2 | 0x80, story, strlen (story));
  write_flagged ("series", "seed-default-target", 1, series, strlen (series));
  write_flagged ("series", "seed-target-b-split", 0x40 | 0x10 | 4, series, strlen (series));
  write_flagged ("series", "seed-validation", 0x10 | 0x20, series, strlen (series));
  write_seed ("vocab", "seed-word", vocab, strlen (vocab));
  write_seed ("vocab", "seed-char", cvocab, strlen (cvocab));
}

/* ---- cuDNN's autotune cache ---- */
static void
algo_cache_seeds (void)
{
  g_autoptr (NlAlgoCache) c = nl_algo_cache_new (NULL);
  static const char *const shapes[] = { "x128x3x32x32 w16x3x3x3 p1 s1 d1 g1 f32 acc-f32",
                                        "x512x64x8x8 w64x64x3x3 p1 s1 d1 g1 bf16 acc-f32" };
  for (int i = 0; i < 6; i++)
    {
      NlAlgoKey k = { i % 2 ? "NVIDIA H100 80GB HBM3" : "odd\tname \xc3\xa9", 90100 + i / 3, (NlAlgoOp) (i % 3),
                      shapes[i % 2], i == 5 };
      NlAlgoChoice ch = { i, i % 2, (guint64) i << 20, 0.125 * i };
      nl_algo_cache_store (c, &k, &ch);
    }
  g_autofree char *text = nl_algo_cache_to_text (c);
  write_seed ("algo-cache", "seed-six", text, strlen (text));
  g_autoptr (NlAlgoCache) empty = nl_algo_cache_new (NULL);
  g_autofree char *none = nl_algo_cache_to_text (empty);
  write_seed ("algo-cache", "seed-empty", none, strlen (none));
}

/* ---- images ---- */
static GBytes *
png_bytes (int w, int h, png_uint_32 format)
{
  png_image img = { .version = PNG_IMAGE_VERSION, .width = w, .height = h, .format = format };
  size_t n = PNG_IMAGE_SIZE (img);
  g_autofree guint8 *pixels = g_malloc (n);
  for (size_t i = 0; i < n; i++)
    pixels[i] = (guint8) (i * 37);
  png_alloc_size_t size = 0;
  png_image_write_to_memory (&img, NULL, &size, 0, pixels, 0, NULL);
  guint8 *out = g_malloc (size);
  if (!png_image_write_to_memory (&img, out, &size, 0, pixels, 0, NULL))
    die (NULL, img.message);
  return g_bytes_new_take (out, size);
}

static GBytes *
jpeg_bytes (int w, int h, gboolean gray)
{
  struct jpeg_compress_struct cinfo;
  struct jpeg_error_mgr jerr;
  unsigned char *out = NULL;
  unsigned long size = 0;
  cinfo.err = jpeg_std_error (&jerr);
  jpeg_create_compress (&cinfo);
  jpeg_mem_dest (&cinfo, &out, &size);
  cinfo.image_width = w;
  cinfo.image_height = h;
  cinfo.input_components = gray ? 1 : 3;
  cinfo.in_color_space = gray ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults (&cinfo);
  jpeg_set_quality (&cinfo, 50, TRUE);
  jpeg_start_compress (&cinfo, TRUE);
  g_autofree guint8 *row = g_malloc (w * 3);
  for (int y = 0; y < h; y++)
    {
      for (int x = 0; x < w * 3; x++)
        row[x] = (guint8) (x * 20 + y * 50);
      JSAMPROW rows[1] = { row };
      jpeg_write_scanlines (&cinfo, rows, 1);
    }
  jpeg_finish_compress (&cinfo);
  jpeg_destroy_compress (&cinfo);
  GBytes *b = g_bytes_new (out, size);
  free (out);
  return b;
}

static void
write_bytes_flagged (const char *target, const char *name, guint8 flags, GBytes *b)
{
  gsize n;
  const void *p = g_bytes_get_data (b, &n);
  write_flagged (target, name, flags, p, n);
}

static void
image_seeds (void)
{
  g_autoptr (GBytes) rgb = png_bytes (3, 2, PNG_FORMAT_RGB);
  g_autoptr (GBytes) gray = png_bytes (2, 3, PNG_FORMAT_GRAY);
  g_autoptr (GBytes) rgba = png_bytes (4, 4, PNG_FORMAT_RGBA);
  g_autoptr (GBytes) jpg = jpeg_bytes (5, 3, FALSE);
  g_autoptr (GBytes) jpg_gray = jpeg_bytes (3, 3, TRUE);
  write_bytes_flagged ("image", "seed-png-rgb", 0, rgb);
  write_bytes_flagged ("image", "seed-png-gray-resized", 2, gray);
  write_bytes_flagged ("image", "seed-png-rgba-3x3", 2 << 2, rgba);
  write_bytes_flagged ("image", "seed-jpeg-rgb", 1, jpg);
  write_bytes_flagged ("image", "seed-jpeg-gray-resized", 1 | 2 | (1 << 2), jpg_gray);
}

/* ---- packed records: the IDX seed's dataset packed, and a float one ---- */
static void
record_seeds (void)
{
  g_autoptr (GError) error = NULL;
  static const char rows[] = "0.5,1,0\n-2,3,1\n4,5,2\n";
  g_autofree char *csv = nl_fuzz_write ("seed.csv", rows, strlen (rows));
  g_autoptr (NlDataset) ds = nl_csv_dataset_open (csv, TRUE, NULL, &error);
  if (!ds)
    die (error, "the CSV dataset");
  g_autofree char *path = seed_path ("record", "seed-f32");
  if (!nl_record_pack_dataset (ds, path, NULL, &error))
    die (error, path);

  guint8 images[16 + 2 * 9] = { 0, 0, 8, 3, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 3 };
  guint8 labels[8 + 2] = { 0, 0, 8, 1, 0, 0, 0, 2, 1, 0 };
  for (int i = 0; i < 18; i++)
    images[16 + i] = (guint8) (i * 13);
  g_autofree char *ip = nl_fuzz_write ("i", images, sizeof images);
  g_autofree char *lp = nl_fuzz_write ("l", labels, sizeof labels);
  g_autoptr (NlDataset) idx = nl_idx_dataset_open (ip, lp, &error);
  g_autofree char *u8 = seed_path ("record", "seed-u8");
  if (!idx || !nl_record_pack_dataset (idx, u8, NULL, &error))
    die (error, u8);

  /* bare records with the cut-and-join of an aligned magic word in a payload */
  g_autofree char *raw = seed_path ("record", "seed-raw-records");
  g_autoptr (NlRecordWriter) w = nl_record_writer_open (raw, &error);
  guint32 magic = GUINT32_TO_LE (NL_RECORD_MAGIC);
  guint8 payload[12] = { 1, 2, 3, 4 };
  memcpy (payload + 4, &magic, 4);
  if (!w || !nl_record_writer_append (w, payload, sizeof payload, &error)
      || !nl_record_writer_append (w, "abc", 3, &error) || !nl_record_writer_close (w, &error))
    die (error, raw);
  g_steal_pointer (&w);
}

/* ---- checkpoints, weights, ONNX and projects of the small model ---- */
static NlModel *
small_model (NlNetwork **net_out)
{
  g_autoptr (GError) error = NULL;
  NlNetwork *net = nl_network_load_data (NL_FUZZ_SMALL_NETWORK, -1, &error);
  NlShape sample = nl_shape_of (3, (int64_t) 1, (int64_t) 4, (int64_t) 4);
  NlOptimConfig cfg;
  NlModel *m;
  nl_optim_config_init (&cfg, NL_OPTIM_ADAM);
  m = net ? nl_model_new_full (net, &sample, &(NlModelOptions) { .seed = 7, .optim = &cfg }, &error) : NULL;
  if (!m)
    die (error, "the small model");
  *net_out = net;
  return m;
}

static void
model_seeds (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlNetwork) net = NULL;
  g_autoptr (NlModel) m = small_model (&net);
  NlTrainPosition pos = { .epoch = 2, .updates = 10, .seed = 5, .optimizer = "adam", .extra_json = "{\"lr\":0.1}" };
  g_autoptr (GBytes) ckpt = nl_checkpoint_save (m, &pos, &error);
  if (!ckpt)
    die (error, "checkpoint");
  gsize n;
  const void *p = g_bytes_get_data (ckpt, &n);
  write_seed ("checkpoint", "seed-checkpoint", p, n);
  g_autofree char *weights = seed_path ("checkpoint", "seed-weights");
  if (!nl_weights_export (m, weights, &error))
    die (error, weights);
  write_seed ("network", "seed-small.json", NL_FUZZ_SMALL_NETWORK, strlen (NL_FUZZ_SMALL_NETWORK));

  /* an INT8 model of it, and its table as text */
  g_autoptr (NlQuantTable) table = nl_quant_table_new (NL_QUANT_ENTROPY, 64);
  nl_quant_table_add (table, "data", -1.5f, 2.5f, 2.25f);
  nl_quant_table_add (table, "bn", -3.0f, 4.0f, 3.5f);
  nl_quant_table_add (table, "fc1", 0.0f, 6.0f, 5.0f);
  nl_quant_table_add (table, "fc2", -8.0f, 9.0f, 9.0f);
  g_autoptr (GBytes) int8 = nl_int8_model_write (m, table, 2, &error);
  if (!int8)
    die (error, "INT8 model");
  p = g_bytes_get_data (int8, &n);
  write_seed ("int8", "seed-int8", p, n);
  g_autofree char *table_text = nl_quant_table_to_json (table);
  write_seed ("int8", "seed-table.json", table_text, strlen (table_text));

  if (nl_onnx_available ())
    {
      NlOnnxExportOptions o = { .opset = 13 };
      const char *const meta[] = { "class_names", "[\"a\",\"b\"]", NULL };
      NlOnnxExportOptions o2 = { .softmax = TRUE, .metadata = meta };
      g_autoptr (GBytes) a = nl_onnx_export (m, &o, &error);
      g_autoptr (GBytes) b = a ? nl_onnx_export (m, &o2, &error) : NULL;
      if (!b)
        die (error, "ONNX export");
      p = g_bytes_get_data (a, &n);
      write_seed ("onnx", "seed-small-opset13.onnx", p, n);
      p = g_bytes_get_data (b, &n);
      write_seed ("onnx", "seed-small-softmax.onnx", p, n);
    }

  /* a project with the sample networks, one run with metrics, a tag, a
   * note and a checkpoint */
  g_autofree char *proj = seed_path ("project", "seed-run");
  g_unlink (proj);
  if (!nl_project_create_sample (proj, &error))
    die (error, proj);
  NlProject *pr = nl_project_open (proj, FALSE, &error);
  g_autofree char *net_json = nl_network_to_json (net);
  NlRunInfo run = { .name = "run 1", .network_name = "small", .network_json = net_json,
                    .pipeline_json = "{\"name\":\"p\",\"dataset_spec\":\"csv:x.csv\",\"batch_size\":2}",
                    .hparams_json = "{\"epochs\":1}", .seed = 3, .device = "cpu", .status = "finished" };
  gint64 id = pr ? nl_project_create_run (pr, &run, &error) : 0;
  NlMetricPoint pts[2] = { { .run = id, .step = 1, .epoch = 1, .split = "test", .name = "test_accuracy", .value = 0.5 },
                           { .run = id, .step = 1, .epoch = 1, .split = "train", .name = "loss", .value = 1.25 } };
  if (!id || !nl_project_add_metrics (pr, pts, 2, &error) || !nl_project_add_tag (pr, id, "seed", &error)
      || !nl_project_add_note (pr, id, "a note", &error)
      || !nl_project_add_checkpoint (pr, id, 1, 1, g_bytes_get_data (ckpt, NULL), g_bytes_get_size (ckpt), "test_accuracy", 0.5, TRUE, 0, &error))
    die (error, proj);
  nl_project_close (pr);
  g_autofree char *wal = g_strconcat (proj, "-wal", NULL), *shm = g_strconcat (proj, "-shm", NULL);
  g_unlink (wal);
  g_unlink (shm);
}

/* traces as train --profile writes them: host ops, a device span, other spans */
static void
trace_seeds (void)
{
  g_autoptr (NlTrace) t = nl_trace_new ();
  g_autofree char *json = NULL;
  gsize len;
  gint64 t0 = g_get_monotonic_time ();
  nl_trace_add_op (t, "conv1", "Conv2D", NL_TRACE_PASS_FORWARD, FALSE, 1, t0, t0 + 300);
  nl_trace_add_op (t, "conv1", "Conv2D", NL_TRACE_PASS_BACKWARD, FALSE, 1, t0 + 300, t0 + 900);
  nl_trace_add_op (t, "fc1", "Dense", NL_TRACE_PASS_FORWARD, FALSE, 2, t0 + 900, t0 + 950);
  nl_trace_add (t, NL_TRACE_CAT_LOADER, "batch", "batch", 1, t0, t0 + 100);
  nl_trace_add (t, NL_TRACE_CAT_STEP, "step", "step", 1, t0, t0 + 1000);
  json = nl_trace_to_json (t, &len);
  write_seed ("trace", "seed-host", json, len);
  nl_trace_add_op (t, "fc1", "Dense", NL_TRACE_PASS_BACKWARD, TRUE, 2, t0 + 950, t0 + 990);
  g_free (json);
  json = nl_trace_to_json (t, &len);
  write_seed ("trace", "seed-device", json, len);
}

int
main (int argc, char **argv)
{
  if (argc != 2)
    {
      fprintf (stderr, "usage: fuzz-make-seeds CORPUS_DIR\n");
      return 2;
    }
  out_dir = argv[1];
  nl_fuzz_init ();
  idx_seeds ();
  cifar_seeds ();
  csv_seeds ();
  sequence_seeds ();
  image_seeds ();
  record_seeds ();
  model_seeds ();
  trace_seeds ();
  algo_cache_seeds ();
  return 0;
}
