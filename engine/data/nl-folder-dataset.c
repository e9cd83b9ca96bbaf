/* nl-folder-dataset.c — image folders: DIR/CLASS/IMAGE.png|jpg.
 *
 * Open only lists the files (and decodes the first image when it sets the
 * size), so memory is one path per sample whatever the images weigh.
 * Samples are decoded in get / read_u8 with per-call decoder state, which
 * makes them thread-safe; a worker pool gets decode parallelism for free.
 *
 * Every image becomes RGB, grayscale included (one rule for every folder,
 * and no need to look at every file at open to pick a channel count);
 * alpha is dropped, as PIL's convert ("RGB") does. */
#include "engine/data/nl-dataset.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <stdio.h> /* jpeglib.h needs FILE */
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jerror.h>
#include <jpeglib.h>
#include <png.h>

/* Bounds that keep a hostile header from asking for gigabytes: 64 Mpixels
 * per decoded image, 16384 per side of the output, 1 GiB per file. */
#define FOLDER_MAX_PIXELS (G_GINT64_CONSTANT (1) << 26)
#define FOLDER_MAX_SIDE 16384
#define FOLDER_MAX_FILE (G_GINT64_CONSTANT (1) << 30)

typedef struct {
  NlDataset base;
  char **paths; /* length of them */
  int *labels;
  int width, height;
} NlFolderDataset;

/* ---- reading and decoding one file ---- */

static guint8 *
read_file (const char *path, gsize *len, GError **error)
{
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  int err = fd < 0 ? errno : fstat (fd, &st) < 0 ? errno : S_ISDIR (st.st_mode) ? EISDIR : 0;
  if (err)
    {
      if (fd >= 0)
        close (fd);
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_NOT_FOUND, "cannot open %s: %s", path, g_strerror (err));
      return NULL;
    }
  if (st.st_size > FOLDER_MAX_FILE)
    {
      close (fd);
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT, "%s is too large for an image (%" G_GINT64_FORMAT
                   " bytes)", path, (int64_t) st.st_size);
      return NULL;
    }
  gsize size = st.st_size, got = 0;
  guint8 *buf = g_malloc (MAX (size, 1));
  while (got < size)
    {
      ssize_t r = read (fd, buf + got, size - got);
      if (r < 0 && errno == EINTR)
        continue;
      if (r <= 0)
        {
          err = r < 0 ? errno : 0;
          close (fd);
          g_free (buf);
          g_set_error (error, NL_DATA_ERROR, r < 0 ? NL_DATA_ERROR_NOT_FOUND : NL_DATA_ERROR_CORRUPT,
                       "cannot read %s: %s", path, r < 0 ? g_strerror (err) : "it shrank while being read");
          return NULL;
        }
      got += r;
    }
  close (fd);
  *len = size;
  return buf;
}

static gboolean
too_large (const char *path, int64_t w, int64_t h, GError **error)
{
  if (w > 0 && h > 0 && w * h <= FOLDER_MAX_PIXELS)
    return FALSE;
  g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT,
               "%s: image size %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT " is empty or too large", path, w, h);
  return TRUE;
}

/* PNG through libpng's simplified API, which handles palettes, gray,
 * 16 bits, interlacing and tRNS; read as RGBA and drop A. */
static guint8 *
decode_png (const char *path, const guint8 *data, gsize len, int *w, int *h, GError **error)
{
  png_image img;
  memset (&img, 0, sizeof img);
  img.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory (&img, data, len))
    {
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT, "%s: corrupt PNG: %s", path, img.message);
      png_image_free (&img);
      return NULL;
    }
  if (too_large (path, img.width, img.height, error))
    {
      png_image_free (&img);
      return NULL;
    }
  img.format = PNG_FORMAT_RGBA;
  guint8 *rgba = g_malloc (PNG_IMAGE_SIZE (img));
  if (!png_image_finish_read (&img, NULL, rgba, 0, NULL))
    {
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT, "%s: corrupt PNG: %s", path, img.message);
      png_image_free (&img);
      g_free (rgba);
      return NULL;
    }
  int64_t n = (int64_t) img.width * img.height;
  for (int64_t k = 0; k < n; k++)
    memmove (rgba + 3 * k, rgba + 4 * k, 3); /* in place: 3k + 3 <= 4k + 1 for k >= 1 */
  *w = img.width;
  *h = img.height;
  return rgba;
}

typedef struct {
  struct jpeg_error_mgr pub;
  jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
} JpegError;

static void
jpeg_fail (j_common_ptr cinfo)
{
  JpegError *e = (JpegError *) cinfo->err;
  cinfo->err->format_message (cinfo, e->message);
  longjmp (e->jump, 1);
}

/* Warnings mean data is missing or damaged (libjpeg would fill the rest
 * with gray), so they fail the image; stray bytes between segments are
 * common in real files and harmless, so they alone are let through. */
static void
jpeg_message (j_common_ptr cinfo, int level)
{
  if (level < 0 && cinfo->err->msg_code != JWRN_EXTRANEOUS_DATA)
    jpeg_fail (cinfo);
}

static guint8 *
decode_jpeg (const char *path, const guint8 *data, gsize len, int *w, int *h, GError **error)
{
  struct jpeg_decompress_struct cinfo;
  JpegError jerr;
  guint8 *volatile rgb = NULL;
  guint8 *volatile row = NULL;
  cinfo.err = jpeg_std_error (&jerr.pub);
  jerr.pub.error_exit = jpeg_fail;
  jerr.pub.emit_message = jpeg_message;
  if (setjmp (jerr.jump))
    {
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT, "%s: corrupt JPEG: %s", path, jerr.message);
      jpeg_destroy_decompress (&cinfo);
      g_free (rgb);
      g_free (row);
      return NULL;
    }
  jpeg_create_decompress (&cinfo);
  jpeg_mem_src (&cinfo, data, len);
  jpeg_read_header (&cinfo, TRUE);
  if (too_large (path, cinfo.image_width, cinfo.image_height, error))
    {
      jpeg_destroy_decompress (&cinfo);
      return NULL;
    }
  /* libjpeg converts YCbCr and gray to RGB itself, not CMYK / YCCK. */
  gboolean cmyk = cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK;
  cinfo.out_color_space = cmyk ? JCS_CMYK : JCS_RGB;
  jpeg_start_decompress (&cinfo);
  int64_t width = cinfo.output_width, height = cinfo.output_height;
  int comps = cinfo.output_components;
  rgb = g_malloc (width * height * 3);
  row = g_malloc (width * comps);
  while (cinfo.output_scanline < cinfo.output_height)
    {
      int64_t y = cinfo.output_scanline;
      JSAMPROW rows[1] = { row };
      jpeg_read_scanlines (&cinfo, rows, 1);
      guint8 *dst = rgb + y * width * 3;
      for (int64_t x = 0; x < width; x++)
        {
          const guint8 *s = row + x * comps;
          if (cmyk)
            {
              /* Adobe writes CMYK inverted (0 = full ink). */
              int c = s[0], m = s[1], yy = s[2], k = s[3];
              if (!cinfo.saw_Adobe_marker)
                c = 255 - c, m = 255 - m, yy = 255 - yy, k = 255 - k;
              dst[3 * x] = (guint8) ((c * k + 127) / 255);
              dst[3 * x + 1] = (guint8) ((m * k + 127) / 255);
              dst[3 * x + 2] = (guint8) ((yy * k + 127) / 255);
            }
          else
            memcpy (dst + 3 * x, s, 3);
        }
    }
  jpeg_finish_decompress (&cinfo);
  jpeg_destroy_decompress (&cinfo);
  g_free (row);
  *w = (int) width;
  *h = (int) height;
  return rgb;
}

/* Decode a PNG or JPEG file (by its content) to packed RGB. */
static guint8 *
decode_file (const char *path, int *w, int *h, GError **error)
{
  gsize len = 0;
  g_autofree guint8 *data = read_file (path, &len, error);
  if (!data)
    return NULL;
  static const guint8 png_sig[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
  if (len >= 8 && memcmp (data, png_sig, 8) == 0)
    return decode_png (path, data, len, w, h, error);
  if (len >= 3 && data[0] == 0xff && data[1] == 0xd8 && data[2] == 0xff)
    return decode_jpeg (path, data, len, w, h, error);
  g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT, "%s is not a PNG or JPEG image%s", path,
               len == 0 ? " (the file is empty)" : "");
  return NULL;
}

/* Packed RGB (sw x sh) to planar RGB (3, dh, dw), bilinear with pixel
 * centres aligned (source x = (x + 0.5) * sw / dw - 0.5, clamped), rounded
 * to nearest. The same size copies exactly. */
static void
resize_to_chw (const guint8 *src, int sw, int sh, guint8 *dst, int dw, int dh)
{
  int64_t plane = (int64_t) dw * dh;
  if (sw == dw && sh == dh)
    {
      for (int64_t k = 0; k < plane; k++)
        for (int c = 0; c < 3; c++)
          dst[c * plane + k] = src[3 * k + c];
      return;
    }
  float sx = (float) sw / (float) dw, sy = (float) sh / (float) dh;
  for (int y = 0; y < dh; y++)
    {
      float fy = ((float) y + 0.5f) * sy - 0.5f;
      fy = CLAMP (fy, 0.0f, (float) (sh - 1));
      int y0 = (int) fy, y1 = MIN (y0 + 1, sh - 1);
      float wy = fy - (float) y0;
      for (int x = 0; x < dw; x++)
        {
          float fx = ((float) x + 0.5f) * sx - 0.5f;
          fx = CLAMP (fx, 0.0f, (float) (sw - 1));
          int x0 = (int) fx, x1 = MIN (x0 + 1, sw - 1);
          float wx = fx - (float) x0;
          for (int c = 0; c < 3; c++)
            {
              float a = src[((int64_t) y0 * sw + x0) * 3 + c], b = src[((int64_t) y0 * sw + x1) * 3 + c];
              float e = src[((int64_t) y1 * sw + x0) * 3 + c], f = src[((int64_t) y1 * sw + x1) * 3 + c];
              float top = a + (b - a) * wx, bottom = e + (f - e) * wx;
              float v = top + (bottom - top) * wy;
              dst[c * plane + (int64_t) y * dw + x] = (guint8) floorf (v + 0.5f);
            }
        }
    }
}

/* ---- the dataset ---- */

static gboolean
folder_read_u8 (NlDataset *ds, int64_t i, guint8 *sample, float *label, GError **error)
{
  NlFolderDataset *d = (NlFolderDataset *) ds;
  if (i < 0 || i >= ds->length)
    {
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_MISMATCH,
                   "sample index %" G_GINT64_FORMAT " is out of range for a dataset of %" G_GINT64_FORMAT,
                   i, ds->length);
      return FALSE;
    }
  int w, h;
  g_autofree guint8 *rgb = decode_file (d->paths[i], &w, &h, error);
  if (!rgb)
    return FALSE;
  resize_to_chw (rgb, w, h, sample, d->width, d->height);
  *label = (float) d->labels[i];
  return TRUE;
}

static gboolean
folder_get (NlDataset *ds, int64_t i, float *sample, float *label, GError **error)
{
  NlFolderDataset *d = (NlFolderDataset *) ds;
  int64_t n = 3 * (int64_t) d->width * d->height;
  g_autofree guint8 *bytes = g_malloc (n);
  if (!folder_read_u8 (ds, i, bytes, label, error))
    return FALSE;
  for (int64_t k = 0; k < n; k++)
    sample[k] = (float) bytes[k] / 255.0f;
  return TRUE;
}

static void
folder_free (NlDataset *ds)
{
  NlFolderDataset *d = (NlFolderDataset *) ds;
  g_strfreev (d->paths);
  g_free (d->labels);
  g_free (d);
}

static const NlDatasetClass folder_class = {
  .type_name = "folder",
  .get = folder_get,
  .read_u8 = folder_read_u8,
  .free = folder_free,
};

static int
compare_names (gconstpointer a, gconstpointer b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

/* Sorted names of the entries of `dir` that are directories (want_dirs) or
 * files with an image extension; hidden entries skipped. */
static GPtrArray *
list_dir (const char *dir, gboolean want_dirs, GError **error)
{
  g_autoptr (GError) dir_error = NULL;
  GDir *d = g_dir_open (dir, 0, &dir_error);
  if (!d)
    {
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_NOT_FOUND, "cannot open folder %s: %s", dir,
                   dir_error->message);
      return NULL;
    }
  GPtrArray *names = g_ptr_array_new_with_free_func (g_free);
  const char *name;
  while ((name = g_dir_read_name (d)))
    {
      if (name[0] == '.')
        continue;
      g_autofree char *full = g_build_filename (dir, name, NULL);
      if (want_dirs)
        {
          if (g_file_test (full, G_FILE_TEST_IS_DIR))
            g_ptr_array_add (names, g_strdup (name));
          continue;
        }
      g_autofree char *lower = g_ascii_strdown (name, -1);
      if ((g_str_has_suffix (lower, ".png") || g_str_has_suffix (lower, ".jpg")
           || g_str_has_suffix (lower, ".jpeg"))
          && !g_file_test (full, G_FILE_TEST_IS_DIR))
        g_ptr_array_add (names, g_strdup (name));
    }
  g_dir_close (d);
  g_ptr_array_sort (names, compare_names);
  return names;
}

NlDataset *
nl_folder_dataset_open (const char *dir, gboolean train, const NlDatasetOptions *opts, GError **error)
{
  g_return_val_if_fail (dir, NULL);
  static const NlDatasetOptions defaults = { 0 };
  if (!opts)
    opts = &defaults;
  if (opts->image_width < 0 || opts->image_height < 0 || opts->image_width > FOLDER_MAX_SIDE
      || opts->image_height > FOLDER_MAX_SIDE)
    {
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_SPEC, "image size %dx%d is outside 0..%d",
                   opts->image_width, opts->image_height, FOLDER_MAX_SIDE);
      return NULL;
    }

  g_autoptr (GPtrArray) classes = list_dir (dir, TRUE, error);
  if (!classes)
    return NULL;
  if (classes->len == 0)
    {
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_NOT_FOUND,
                   "folder %s has no class subfolders (expected %s/CLASS/IMAGE.png or .jpg)", dir, dir);
      return NULL;
    }
  g_autoptr (GPtrArray) paths = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GArray) labels = g_array_new (FALSE, FALSE, sizeof (int));
  for (guint c = 0; c < classes->len; c++)
    {
      g_autofree char *sub = g_build_filename (dir, (char *) classes->pdata[c], NULL);
      g_autoptr (GPtrArray) files = list_dir (sub, FALSE, error);
      if (!files)
        return NULL;
      for (guint k = 0; k < files->len; k++)
        {
          int label = (int) c;
          g_ptr_array_add (paths, g_build_filename (sub, (char *) files->pdata[k], NULL));
          g_array_append_val (labels, label);
        }
    }
  int64_t n = paths->len;
  if (n == 0)
    {
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_NOT_FOUND,
                   "folder %s has %u class subfolders but no .png / .jpg / .jpeg images in them", dir,
                   classes->len);
      return NULL;
    }

  /* The size: from the options, else from the first image of the whole
   * folder, so both sides of a split agree. */
  int width = opts->image_width, height = opts->image_height;
  if (width == 0 || height == 0)
    {
      int w, h;
      g_autofree guint8 *rgb = decode_file (paths->pdata[0], &w, &h, error);
      if (!rgb)
        return NULL;
      width = width ? width : MIN (w, FOLDER_MAX_SIDE);
      height = height ? height : MIN (h, FOLDER_MAX_SIDE);
    }

  int64_t m;
  g_autofree int64_t *rows = nl_dataset_split (n, opts->val_fraction, train, dir, &m, error);
  if (!rows)
    return NULL;
  NlFolderDataset *d = g_new0 (NlFolderDataset, 1);
  d->base.klass = &folder_class;
  d->base.length = m;
  d->base.sample_shape = nl_shape_of (3, (int64_t) 3, (int64_t) height, (int64_t) width);
  d->base.n_classes = (int) classes->len;
  d->base.class_names = g_new0 (char *, classes->len + 1);
  for (guint c = 0; c < classes->len; c++)
    d->base.class_names[c] = g_strdup (classes->pdata[c]);
  d->paths = g_new0 (char *, m + 1);
  d->labels = g_new (int, m);
  for (int64_t i = 0; i < m; i++)
    {
      d->paths[i] = g_strdup (paths->pdata[rows[i]]);
      d->labels[i] = g_array_index (labels, int, rows[i]);
    }
  d->width = width;
  d->height = height;
  if (opts->val_fraction > 0)
    d->base.description = g_strdup_printf ("image folder %s (%" G_GINT64_FORMAT " of %" G_GINT64_FORMAT
                                           " images, %u classes, 3x%dx%d) from %s",
                                           train ? "train" : "validation", m, n, classes->len, height, width, dir);
  else
    d->base.description = g_strdup_printf ("image folder (%" G_GINT64_FORMAT " images, %u classes, 3x%dx%d) from %s",
                                           n, classes->len, height, width, dir);
  return &d->base;
}

gboolean
nl_folder_dataset_count_labels (const char *dir, double val_fraction, int n_classes, int64_t length,
                                int64_t *counts)
{
  g_autoptr (GPtrArray) classes = list_dir (dir, TRUE, NULL);
  g_autoptr (GArray) labels = g_array_new (FALSE, FALSE, sizeof (int));
  g_autofree int64_t *rows = NULL;
  int64_t m;

  if (!classes || (int) classes->len != n_classes)
    return FALSE;
  for (int c = 0; c < n_classes; c++)
    {
      g_autofree char *sub = g_build_filename (dir, (char *) classes->pdata[c], NULL);
      g_autoptr (GPtrArray) files = list_dir (sub, FALSE, NULL);
      if (!files)
        return FALSE;
      for (guint k = 0; k < files->len; k++)
        g_array_append_val (labels, c);
    }
  rows = nl_dataset_split (labels->len, val_fraction, TRUE, dir, &m, NULL);
  if (!rows || m != length)
    return FALSE;
  for (int64_t i = 0; i < m; i++)
    counts[g_array_index (labels, int, rows[i])]++;
  return TRUE;
}
