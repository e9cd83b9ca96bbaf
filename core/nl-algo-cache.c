/* nl-algo-cache.c — cuDNN's autotuned choices in memory and on disk (see
 * nl-algo-cache.h). */
#include "core/nl-algo-cache.h"

#include "core/nl-atomic-file.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#define MAGIC "netloom-algo-cache 1\n"
/* far above any real network's count; bounds what a damaged file can ask for */
#define MAX_ENTRIES 1000000

struct NlAlgoCache {
  GMutex lock;
  char *path;           /* NULL: memory only */
  GHashTable *entries;  /* canonical key line prefix -> NlAlgoChoice */
  gboolean disk_ok;     /* FALSE once writing failed: memory only from then */
  gboolean warned_damage;
};

static const char *const op_names[] = { "fwd", "bwd-data", "bwd-filter" };

static char *
key_text (const char *device, int cudnn, NlAlgoOp op, gboolean det, const char *shape)
{
  g_autofree char *d = g_strescape (device, NULL);
  g_autofree char *s = g_strescape (shape, NULL);
  return g_strdup_printf ("%s\t%d\t%s\t%d\t%s", d, cudnn, op_names[op], det ? 1 : 0, s);
}

static NlAlgoCache *
new_empty (const char *path)
{
  NlAlgoCache *c = g_new0 (NlAlgoCache, 1);
  g_mutex_init (&c->lock);
  c->path = g_strdup (path);
  c->entries = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  c->disk_ok = path != NULL;
  return c;
}

void
nl_algo_cache_free (NlAlgoCache *c)
{
  if (!c)
    return;
  g_hash_table_destroy (c->entries);
  g_free (c->path);
  g_mutex_clear (&c->lock);
  g_free (c);
}

/* ---- the format ---- */

static gboolean
bad (GError **error, int line, const char *what)
{
  if (line > 0)
    g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "line %d: %s", line, what);
  else
    g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s", what);
  return FALSE;
}

static gboolean
parse_int (const char *s, gint64 lo, gint64 hi, gint64 *out)
{
  return g_ascii_string_to_signed (s, 10, lo, hi, out, NULL);
}

/* g_strcompress warns about a trailing lone backslash: refuse it first */
static gboolean
escaped_ok (const char *s)
{
  for (; *s; s++)
    if (*s == '\\' && !*++s)
      return FALSE;
  return TRUE;
}

/* One entry line into table (key -> choice); FALSE when it is not one. */
static gboolean
parse_entry (const char *line, GHashTable *table)
{
  g_auto (GStrv) f = g_strsplit (line, "\t", -1);
  if (g_strv_length (f) != 9 || !*f[0] || !*f[4] || !escaped_ok (f[0]) || !escaped_ok (f[4]))
    return FALSE;
  gint64 cudnn, det, algo, math;
  guint64 ws;
  int op = -1;
  for (int i = 0; i < (int) G_N_ELEMENTS (op_names); i++)
    if (strcmp (f[2], op_names[i]) == 0)
      op = i;
  if (op < 0 || !parse_int (f[1], 0, G_MAXINT, &cudnn) || !parse_int (f[3], 0, 1, &det)
      || !parse_int (f[5], 0, 1 << 16, &algo) || !parse_int (f[6], 0, 1 << 16, &math)
      || !g_ascii_string_to_unsigned (f[7], 10, 0, G_MAXUINT64, &ws, NULL))
    return FALSE;
  char *end = NULL;
  double ms = g_ascii_strtod (f[8], &end);
  if (end == f[8] || *end || !isfinite (ms) || ms < 0)
    return FALSE;
  /* decoded and escaped again: every spelling of a key is one entry */
  g_autofree char *device = g_strcompress (f[0]);
  g_autofree char *shape = g_strcompress (f[4]);
  if (!*device || !*shape)
    return FALSE;
  NlAlgoChoice *ch = g_new (NlAlgoChoice, 1);
  *ch = (NlAlgoChoice) { (int) algo, (int) math, ws, ms };
  g_hash_table_replace (table, key_text (device, (int) cudnn, op, det != 0, shape), ch);
  return TRUE;
}

/* text into a new table, or NULL with error saying what is wrong */
static GHashTable *
parse_text (const char *text, gsize len, GError **error)
{
  if (len < strlen (MAGIC) || memcmp (text, MAGIC, strlen (MAGIC)) != 0)
    return bad (error, 0, "not a netloom algorithm cache (no header)"), NULL;
  if (memchr (text, '\0', len))
    return bad (error, 0, "a NUL byte in the text"), NULL;
  if (text[len - 1] != '\n')
    return bad (error, 0, "truncated (no end line)"), NULL;
  /* the end line: the last line of the text */
  gsize end_at = len - 1;
  while (end_at > 0 && text[end_at - 1] != '\n')
    end_at--;
  g_autofree char *end_line = g_strndup (text + end_at, len - 1 - end_at);
  g_auto (GStrv) e = g_strsplit (end_line, " ", -1);
  gint64 n_declared;
  if (end_at < strlen (MAGIC) || g_strv_length (e) != 3 || strcmp (e[0], "end") != 0
      || !parse_int (e[1], 0, MAX_ENTRIES, &n_declared))
    return bad (error, 0, "truncated (no end line)"), NULL;
  g_autofree char *sum = g_compute_checksum_for_data (G_CHECKSUM_SHA256, (const guchar *) text, end_at);
  if (strcmp (sum, e[2]) != 0)
    return bad (error, 0, "checksum mismatch"), NULL;

  GHashTable *table = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autofree char *body = g_strndup (text + strlen (MAGIC), end_at - strlen (MAGIC));
  g_auto (GStrv) lines = g_strsplit (body, "\n", -1);
  int n = 0;
  for (int i = 0; lines[i]; i++)
    {
      if (!lines[i + 1] && !*lines[i])
        break; /* the empty piece after the last newline */
      if (++n > n_declared || !parse_entry (lines[i], table))
        {
          g_hash_table_destroy (table);
          return bad (error, i + 2, n > n_declared ? "more entries than the end line counts" : "not an entry"),
                 NULL;
        }
    }
  if (n != n_declared)
    {
      g_hash_table_destroy (table);
      return bad (error, 0, "fewer entries than the end line counts"), NULL;
    }
  return table;
}

static gint
cmp_str (gconstpointer a, gconstpointer b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

static char *
to_text_locked (NlAlgoCache *c)
{
  guint n = 0;
  g_autofree gpointer *keys = g_hash_table_get_keys_as_array (c->entries, &n);
  qsort (keys, n, sizeof *keys, cmp_str);
  GString *s = g_string_new (MAGIC);
  for (guint i = 0; i < n; i++)
    {
      const NlAlgoChoice *ch = g_hash_table_lookup (c->entries, keys[i]);
      char ms[G_ASCII_DTOSTR_BUF_SIZE];
      g_string_append_printf (s, "%s\t%d\t%d\t%" G_GUINT64_FORMAT "\t%s\n", (const char *) keys[i], ch->algo,
                              ch->math_type, ch->workspace, g_ascii_dtostr (ms, sizeof ms, ch->ms));
    }
  g_autofree char *sum = g_compute_checksum_for_data (G_CHECKSUM_SHA256, (const guchar *) s->str, s->len);
  g_string_append_printf (s, "end %u %s\n", n, sum);
  return g_string_free (s, FALSE);
}

/* from's entries that c lacks into c (what c holds is newer) */
static void
merge_missing (NlAlgoCache *c, GHashTable *from)
{
  GHashTableIter it;
  gpointer k, v;
  g_hash_table_iter_init (&it, from);
  while (g_hash_table_iter_next (&it, &k, &v))
    if (!g_hash_table_contains (c->entries, k))
      {
        g_hash_table_iter_steal (&it);
        g_hash_table_insert (c->entries, k, v);
      }
}

gboolean
nl_algo_cache_parse (NlAlgoCache *c, const char *text, gsize len, GError **error)
{
  GHashTable *t = parse_text (text, len, error);
  if (!t)
    return FALSE;
  g_mutex_lock (&c->lock);
  GHashTableIter it;
  gpointer k, v;
  g_hash_table_iter_init (&it, t);
  while (g_hash_table_iter_next (&it, &k, &v))
    {
      g_hash_table_iter_steal (&it);
      g_hash_table_replace (c->entries, k, v);
    }
  g_mutex_unlock (&c->lock);
  g_hash_table_destroy (t);
  return TRUE;
}

char *
nl_algo_cache_to_text (NlAlgoCache *c)
{
  g_mutex_lock (&c->lock);
  char *s = to_text_locked (c);
  g_mutex_unlock (&c->lock);
  return s;
}

/* ---- the file ---- */

static void
disk_failed (NlAlgoCache *c, const char *why)
{
  g_warning ("algorithm cache %s cannot be written (%s): keeping it in memory", c->path, why);
  c->disk_ok = FALSE;
}

/* The file's entries merged into c's (c's win); a damaged file is
 * ignored, with a warning the first time. Absent: nothing. */
static void
read_file_locked (NlAlgoCache *c, gboolean *damaged)
{
  g_autofree char *text = NULL;
  gsize len = 0;
  g_autoptr (GError) error = NULL;
  *damaged = FALSE;
  /* absent is the first run; unreadable (a folder in the way, no
   * permission) is the writer's to report, once */
  if (!g_file_get_contents (c->path, &text, &len, NULL))
    return;
  GHashTable *t = parse_text (text, len, &error);
  if (t)
    {
      merge_missing (c, t);
      g_hash_table_destroy (t);
      return;
    }
  *damaged = TRUE;
  if (!c->warned_damage)
    {
      c->warned_damage = TRUE;
      g_warning ("algorithm cache %s is damaged (%s): ignoring it and writing it anew", c->path, error->message);
    }
}

/* Under the lock file: merge the file's entries, then replace the file
 * with the union. */
static void
flush_locked (NlAlgoCache *c)
{
  g_autofree char *dir = g_path_get_dirname (c->path);
  if (g_mkdir_with_parents (dir, 0755) != 0)
    {
      g_autofree char *why = g_strdup_printf ("cannot create %s: %s", dir, g_strerror (errno));
      disk_failed (c, why);
      return;
    }
  g_autofree char *lock_path = g_strconcat (c->path, ".lock", NULL);
  int fd = g_open (lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0)
    {
      g_autofree char *why = g_strdup_printf ("cannot open %s: %s", lock_path, g_strerror (errno));
      disk_failed (c, why);
      return;
    }
  while (flock (fd, LOCK_EX) != 0 && errno == EINTR)
    ;
  gboolean damaged;
  read_file_locked (c, &damaged);
  g_autofree char *text = to_text_locked (c);
  g_autoptr (GError) error = NULL;
  if (!nl_atomic_file_set_contents (c->path, text, strlen (text), &error))
    disk_failed (c, error->message);
  close (fd); /* releases the flock */
}

NlAlgoCache *
nl_algo_cache_new (const char *path)
{
  NlAlgoCache *c = new_empty (path);
  if (!path)
    return c;
  gboolean damaged;
  read_file_locked (c, &damaged);
  if (damaged)
    flush_locked (c); /* rewritten now, not left for every later process to warn about */
  return c;
}

char *
nl_algo_cache_default_path (void)
{
  return g_build_filename (g_get_user_cache_dir (), "netloom", "cudnn-algos.txt", NULL);
}

NlAlgoCache *
nl_algo_cache_default (void)
{
  static gsize cache;
  if (g_once_init_enter (&cache))
    {
      g_autofree char *path = nl_algo_cache_default_path ();
      g_once_init_leave (&cache, (gsize) nl_algo_cache_new (path));
    }
  return (NlAlgoCache *) cache;
}

/* ---- lookups ---- */

static char *
key_of (const NlAlgoKey *key)
{
  g_return_val_if_fail (key->device && *key->device && key->shape && *key->shape, NULL);
  g_return_val_if_fail (key->op >= NL_ALGO_OP_FWD && key->op <= NL_ALGO_OP_BWD_FILTER, NULL);
  return key_text (key->device, key->cudnn_version, key->op, key->deterministic, key->shape);
}

gboolean
nl_algo_cache_lookup (NlAlgoCache *c, const NlAlgoKey *key, NlAlgoChoice *out)
{
  g_autofree char *k = key_of (key);
  if (!k)
    return FALSE;
  g_mutex_lock (&c->lock);
  const NlAlgoChoice *ch = g_hash_table_lookup (c->entries, k);
  if (ch)
    *out = *ch;
  g_mutex_unlock (&c->lock);
  return ch != NULL;
}

void
nl_algo_cache_store (NlAlgoCache *c, const NlAlgoKey *key, const NlAlgoChoice *choice)
{
  char *k = key_of (key);
  if (!k)
    return;
  g_mutex_lock (&c->lock);
  g_hash_table_replace (c->entries, k, g_memdup2 (choice, sizeof *choice));
  if (c->disk_ok)
    flush_locked (c);
  g_mutex_unlock (&c->lock);
}

guint
nl_algo_cache_size (NlAlgoCache *c)
{
  g_mutex_lock (&c->lock);
  guint n = g_hash_table_size (c->entries);
  g_mutex_unlock (&c->lock);
  return n;
}
