/* nl-atomic-file.c — temporary file, fsync, rename (see nl-atomic-file.h). */
#include "core/nl-atomic-file.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <unistd.h>

struct NlAtomicFile {
  char *path, *tmp_path;
  int fd;
};

static gboolean
fail (GError **error, const char *what, const char *path, int err)
{
  g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (err), "cannot %s %s: %s", what, path, g_strerror (err));
  return FALSE;
}

NlAtomicFile *
nl_atomic_file_open (const char *path, GError **error)
{
  g_return_val_if_fail (path != NULL, NULL);
  NlAtomicFile *f = g_new0 (NlAtomicFile, 1);
  f->path = g_strdup (path);
  f->tmp_path = g_strdup_printf ("%s.tmp-XXXXXX", path);
  /* open applies the umask to 0666: the mode any new file gets */
  f->fd = g_mkstemp_full (f->tmp_path, O_RDWR | O_CLOEXEC, 0666);
  if (f->fd < 0)
    {
      fail (error, "create", path, errno);
      g_free (f->path);
      g_free (f->tmp_path);
      g_free (f);
      return NULL;
    }
  return f;
}

int
nl_atomic_file_fd (const NlAtomicFile *f)
{
  return f->fd;
}

const char *
nl_atomic_file_path (const NlAtomicFile *f)
{
  return f->path;
}

gboolean
nl_atomic_file_write (NlAtomicFile *f, const void *data, gsize len, GError **error)
{
  const guint8 *p = data;
  while (len > 0)
    {
      ssize_t r = write (f->fd, p, MIN (len, (gsize) 1 << 30));
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0)
        return fail (error, "write", f->path, errno);
      p += r;
      len -= (gsize) r;
    }
  return TRUE;
}

static void
atomic_free (NlAtomicFile *f)
{
  if (f->fd >= 0)
    close (f->fd);
  g_free (f->path);
  g_free (f->tmp_path);
  g_free (f);
}

void
nl_atomic_file_abort (NlAtomicFile *f)
{
  if (!f)
    return;
  g_unlink (f->tmp_path);
  atomic_free (f);
}

gboolean
nl_atomic_file_commit (NlAtomicFile *f, GError **error)
{
  g_return_val_if_fail (f != NULL, FALSE);
  /* fsync before rename: else a crash can leave the name pointing at a
   * file whose data never reached the disk */
  if (fsync (f->fd) < 0)
    {
      fail (error, "write", f->path, errno);
      nl_atomic_file_abort (f);
      return FALSE;
    }
  int fd = f->fd;
  f->fd = -1;
  if (close (fd) < 0)
    {
      fail (error, "write", f->path, errno);
      nl_atomic_file_abort (f);
      return FALSE;
    }
  if (g_rename (f->tmp_path, f->path) < 0)
    {
      fail (error, "write", f->path, errno);
      nl_atomic_file_abort (f);
      return FALSE;
    }
  /* make the rename itself durable; a failure here loses nothing written */
  g_autofree char *dir = g_path_get_dirname (f->path);
  int dfd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0)
    {
      fsync (dfd);
      close (dfd);
    }
  atomic_free (f);
  return TRUE;
}

gboolean
nl_atomic_file_set_contents (const char *path, const void *data, gsize len, GError **error)
{
  NlAtomicFile *f = nl_atomic_file_open (path, error);
  if (!f)
    return FALSE;
  if (!nl_atomic_file_write (f, data, len, error))
    {
      nl_atomic_file_abort (f);
      return FALSE;
    }
  return nl_atomic_file_commit (f, error);
}

gboolean
nl_atomic_file_set_bytes (const char *path, GBytes *bytes, GError **error)
{
  gsize size;
  const void *data;
  if (!bytes)
    return FALSE;
  data = g_bytes_get_data (bytes, &size);
  return nl_atomic_file_set_contents (path, data ? data : "", size, error); /* empty bytes have no data */
}
