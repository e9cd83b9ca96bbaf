/* cli-explain.c — `explain`: where a checkpoint looked in an image
 * (saliency, Grad-CAM or occlusion, nl-explain.h), written as the image
 * with the heat map laid over it, and with --json the map's grid and the
 * class scores. */
#include <math.h>
#include <png.h>
#include <stdio.h>
#include <string.h>

#include <json-glib/json-glib.h>

#include "cli-common.h"
#include "core/nl-atomic-file.h"
#include "core/nl-json-guard.h"
#include "engine/session/nl-explain.h"

#define MIN_SIDE 224     /* the overlay is scaled up to at least this, so a 28 px map can be seen */
#define ALPHA 0.5f       /* of the heat map over the image */

/* Jet: 0 blue, 0.5 green-yellow, 1 red. */
static void
jet (float m, float rgb[3])
{
  for (int k = 0; k < 3; k++)
    rgb[k] = CLAMP (1.5f - fabsf (4.0f * m - (3 - k)), 0.0f, 1.0f);
}

static void
png_append (png_structp png, png_bytep data, png_size_t len)
{
  g_byte_array_append (png_get_io_ptr (png), data, len);
}

static void
png_flush_nothing (png_structp png)
{
  (void) png;
}

/* seen: the image as the model saw it ((1 or 3, h, w) in [0, 1]); map: h x w.
 * Writes PATH (RGB, each side scaled by the same whole factor) atomically. */
static gboolean
write_overlay (const char *path, const float *seen, int channels, int h, int w, const float *map, int *out_w,
               int *out_h, GError **error)
{
  int scale = MAX (1, (MIN_SIDE + MIN (h, w) - 1) / MIN (h, w));
  int W = w * scale, H = h * scale;
  g_autofree float *big = g_new (float, (gsize) W * H);
  g_autofree png_byte *row = g_new (png_byte, (gsize) 3 * W);
  g_autoptr (GByteArray) bytes = g_byte_array_new ();
  png_structp png = png_create_write_struct (PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
  png_infop info = png ? png_create_info_struct (png) : NULL;
  int64_t plane = (int64_t) h * w;

  if (!info || setjmp (png_jmpbuf (png)))
    {
      png_destroy_write_struct (&png, &info);
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "cannot encode the overlay PNG for %s", path);
      return FALSE;
    }
  nl_explain_resize_bilinear (map, h, w, big, H, W);
  png_set_write_fn (png, bytes, png_append, png_flush_nothing);
  png_set_IHDR (png, info, W, H, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
                PNG_FILTER_TYPE_DEFAULT);
  png_write_info (png, info);
  for (int y = 0; y < H; y++)
    {
      for (int x = 0; x < W; x++)
        {
          int64_t k = (int64_t) (y / scale) * w + x / scale;
          float heat[3];
          jet (big[(int64_t) y * W + x], heat);
          for (int c = 0; c < 3; c++)
            {
              float base = seen[(channels == 3 ? c : 0) * plane + k];
              row[3 * x + c] = (png_byte) lrintf (255.0f * CLAMP ((1 - ALPHA) * base + ALPHA * heat[c], 0.0f, 1.0f));
            }
        }
      png_write_row (png, row);
    }
  png_write_end (png, NULL);
  png_destroy_write_struct (&png, &info);
  *out_w = W;
  *out_h = H;
  return nl_atomic_file_set_contents (path, bytes->data, bytes->len, error);
}

/* layer: Grad-CAM's, else NULL */
static void
print_json (const NlExplainer *e, const NlExplanation *x, const char *input, const char *out, const char *method,
            const char *layer, int out_w, int out_h)
{
  g_autoptr (JsonBuilder) jb = json_builder_new ();
  const char *const *names = nl_explainer_class_names (e);
  g_autoptr (JsonNode) root = NULL;
  g_autofree char *text = NULL;

  json_builder_begin_object (jb);
  json_builder_set_member_name (jb, "input");
  json_builder_add_string_value (jb, input);
  json_builder_set_member_name (jb, "method");
  json_builder_add_string_value (jb, method);
  if (layer)
    {
      json_builder_set_member_name (jb, "layer");
      json_builder_add_string_value (jb, layer);
    }
  json_builder_set_member_name (jb, "predicted");
  json_builder_add_int_value (jb, x->predicted);
  json_builder_set_member_name (jb, "target");
  json_builder_add_int_value (jb, x->target);
  json_builder_set_member_name (jb, "classes");
  json_builder_begin_array (jb);
  for (int c = 0; c < x->n_classes; c++)
    json_builder_add_string_value (jb, names[c]);
  json_builder_end_array (jb);
  json_builder_set_member_name (jb, "scores");
  json_builder_begin_array (jb);
  for (int c = 0; c < x->n_classes; c++)
    json_builder_add_double_value (jb, x->scores[c]);
  json_builder_end_array (jb);
  json_builder_set_member_name (jb, "height");
  json_builder_add_int_value (jb, x->height);
  json_builder_set_member_name (jb, "width");
  json_builder_add_int_value (jb, x->width);
  json_builder_set_member_name (jb, "map");
  json_builder_begin_array (jb);
  for (int y = 0; y < x->height; y++)
    {
      json_builder_begin_array (jb);
      for (int i = 0; i < x->width; i++)
        json_builder_add_double_value (jb, x->map[y * x->width + i]);
      json_builder_end_array (jb);
    }
  json_builder_end_array (jb);
  json_builder_set_member_name (jb, "out");
  json_builder_add_string_value (jb, out);
  json_builder_set_member_name (jb, "out_width");
  json_builder_add_int_value (jb, out_w);
  json_builder_set_member_name (jb, "out_height");
  json_builder_add_int_value (jb, out_h);
  json_builder_end_object (jb);
  root = json_builder_get_root (jb);
  text = nl_json_fix_numbers (json_to_string (root, FALSE));
  printf ("%s\n", text);
}

int
nl_cli_explain (int argc, char **argv)
{
  g_autofree char *path = NULL, *which = NULL, *method = NULL, *layer = NULL, *input = NULL, *out = NULL;
  gint64 run = 0;
  int target = -1, window = 0, stride = 0, out_w = 0, out_h = 0, status = 0;
  gboolean json = FALSE;
  GOptionEntry entries[] = {
    { "project", 'p', 0, G_OPTION_ARG_FILENAME, &path, "The project", "FILE" },
    { "run", 'r', 0, G_OPTION_ARG_INT64, &run, "The run", "ID" },
    { "checkpoint", 'c', 0, G_OPTION_ARG_STRING, &which, "best (default), last or an epoch", "ID" },
    { "method", 'm', 0, G_OPTION_ARG_STRING, &method, "saliency, gradcam or occlusion", "METHOD" },
    { "class", 'k', 0, G_OPTION_ARG_INT, &target, "The class explained (default: the predicted one)", "K" },
    { "layer", 'l', 0, G_OPTION_ARG_STRING, &layer, "Grad-CAM: the layer (default: the last Conv2D)", "NODE" },
    { "window", 0, 0, G_OPTION_ARG_INT, &window, "Occlusion: the window side (default: a quarter of the image)",
      "PX" },
    { "stride", 0, 0, G_OPTION_ARG_INT, &stride, "Occlusion: the window's step (default: half the window)", "PX" },
    { "input", 'i', 0, G_OPTION_ARG_FILENAME, &input, "The image (PNG or JPEG)", "FILE" },
    { "out", 'o', 0, G_OPTION_ARG_FILENAME, &out, "The image with the heat map over it (PNG)", "FILE" },
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "Print the map's grid and the class scores as JSON", NULL },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("- where a checkpoint looked in an image");
  g_autoptr (GError) error = NULL;
  g_autoptr (NlProject) p = NULL;
  g_autoptr (NlExplainer) e = NULL;
  g_autofree float *sample = NULL, *seen = NULL;
  NlExplainOptions o = { 0 };
  NlExplanation x = { 0 };
  NlShape shape;
  gboolean ok;

  if (!nl_cli_parse (ctx, entries, &argc, &argv, "explain", &status))
    return status;
  if (run <= 0 || !input || !out || !method)
    return nl_cli_usage_error ("--run ID, --method METHOD, --input FILE and --out FILE are required");
  if (!nl_explain_method_parse (method, &o.method))
    return nl_cli_usage_error ("unknown method “%s”: saliency, gradcam or occlusion", method);
  if (target < -1 || window < 0 || stride < 0)
    return nl_cli_usage_error ("--class, --window and --stride are at least 0");
  if (layer && o.method != NL_EXPLAIN_GRADCAM)
    return nl_cli_usage_error ("--layer goes with --method gradcam");
  if ((window || stride) && o.method != NL_EXPLAIN_OCCLUSION)
    return nl_cli_usage_error ("--window and --stride go with --method occlusion");
  o.target_class = target;
  o.layer = layer;
  o.window = window;
  o.stride = stride;
  if (!(p = nl_cli_open_project (path, &status)))
    return status;
  if (!(e = nl_explainer_new (p, run, which, &error)) || !nl_explainer_read_image (e, input, &sample, &seen, &error)
      || !nl_explainer_explain (e, sample, &o, &x, &error))
    return nl_cli_fail (error);
  shape = nl_explainer_sample_shape (e);
  ok = write_overlay (out, seen, (int) shape.d[0], x.height, x.width, x.map, &out_w, &out_h, &error);
  if (ok && json)
    print_json (e, &x, input, out, method,
                o.method == NL_EXPLAIN_GRADCAM ? (layer ? layer : nl_explainer_default_layer (e)) : NULL, out_w, out_h);
  else if (ok)
    printf ("%s: %s of class %s (predicted %s, p = %.4f) written to %s (%dx%d)\n", input, method,
            nl_explainer_class_names (e)[x.target], nl_explainer_class_names (e)[x.predicted],
            x.scores[x.predicted], out, out_w, out_h);
  nl_explanation_clear (&x);
  return ok ? 0 : nl_cli_fail (error);
}
