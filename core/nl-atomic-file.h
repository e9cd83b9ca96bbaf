/* nl-atomic-file.h — writing a user's file so that it is either whole or
 * not there: the bytes go to a temporary file in the same directory
 * ("NAME.tmp-XXXXXX"), which is fsynced and renamed over NAME only on
 * commit. A failed write, a full disk or a crash leaves no partial file
 * under NAME, and an existing NAME untouched until the rename. Every
 * writer of user files (weights, ONNX, packed records, CSV exports,
 * networks) goes through here. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct NlAtomicFile NlAtomicFile;

/* Creates the temporary file (mode 0666 less the umask). Errors name path. */
NlAtomicFile *nl_atomic_file_open (const char *path, GError **error);
/* The temporary file's descriptor, for writers that stream through stdio
 * (fdopen a dup of it and fclose that before commit). */
int nl_atomic_file_fd (const NlAtomicFile *f);
const char *nl_atomic_file_path (const NlAtomicFile *f);
gboolean nl_atomic_file_write (NlAtomicFile *f, const void *data, gsize len, GError **error);
/* fsync, rename into place, fsync the directory; frees f. On failure the
 * temporary file is removed (f freed too) and path is as it was. */
gboolean nl_atomic_file_commit (NlAtomicFile *f, GError **error);
/* Removes the temporary file and frees f. NULL is ignored. */
void nl_atomic_file_abort (NlAtomicFile *f);

/* The whole of path in one go. */
gboolean nl_atomic_file_set_contents (const char *path, const void *data, gsize len, GError **error);
/* The same with bytes made by a call that may have failed: NULL (its error
 * already set) writes nothing and returns FALSE. */
gboolean nl_atomic_file_set_bytes (const char *path, GBytes *bytes, GError **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (NlAtomicFile, nl_atomic_file_abort)

G_END_DECLS
