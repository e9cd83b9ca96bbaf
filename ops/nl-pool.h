/* nl-pool.h — a caching allocator for device memory.
 *
 * A training step allocates and frees the same sizes every time; going to
 * cudaMalloc/cudaFree for each would synchronise the device and cost
 * milliseconds. The pool keeps freed blocks and hands them out again:
 * sizes are rounded up to 512 bytes, a request takes the smallest cached
 * block that fits (best fit), and a block much larger than asked for is
 * split, the rest staying cached. Only when nothing cached fits does it ask
 * the backend; when the backend has no room, every cached block that is
 * wholly free is given back and the request tried once more, and only then
 * does it fail with one error naming what asked, the bytes, and what the
 * pool holds.
 *
 * The backend is a pair of functions, so the same pool serves a CUDA device
 * (ops/cuda) and tests (a fake device with a byte limit). Every call is
 * thread-safe. Memory is stream-ordered: with one stream per device, a
 * block freed by a kernel's owner may be handed to the next kernel at once,
 * as PyTorch's caching allocator does. */
#pragma once

#include <glib.h>
#include <stddef.h>

G_BEGIN_DECLS

#define NL_POOL_ERROR (nl_pool_error_quark ())
GQuark nl_pool_error_quark (void);
typedef enum {
  NL_POOL_ERROR_NOMEM,
} NlPoolError;

typedef struct {
  /* NULL when the device has no room for nbytes */
  void *(*alloc) (gpointer user, size_t nbytes);
  void (*free) (gpointer user, void *ptr);
  gpointer user;
} NlPoolBackend;

typedef struct {
  size_t in_use;          /* bytes handed out (rounded; a block above 1 MiB also
                           * keeps a tail of up to 1 MiB that is not worth splitting) */
  size_t cached;          /* bytes held from the backend but not handed out */
  size_t peak_in_use;
  size_t reserved;        /* in_use + cached: what the backend gave */
  guint64 backend_allocs; /* calls to backend->alloc that succeeded */
  guint64 backend_frees;
} NlPoolStats;

typedef struct NlPool NlPool;

/* device_name ("cuda:0") is used in error messages. */
NlPool *nl_pool_new (const NlPoolBackend *backend, const char *device_name);
/* Gives every block back to the backend; blocks still handed out are a
 * caller's bug and are reported with g_warning. */
void nl_pool_free (NlPool *pool);
/* At least nbytes (0 is allowed: a valid unique pointer of 512 bytes).
 * what names the asker in the error: "conv1 (Conv2D) forward".
 * The error (NL_POOL_ERROR_NOMEM) reads like:
 *   out of memory on cuda:0: conv1 (Conv2D) forward asked for 1,073,741,824 bytes (1024.0 MiB);
 *   netloom holds 70.2 GiB there (69.9 GiB in use) */
void *nl_pool_alloc (NlPool *pool, size_t nbytes, const char *what, GError **error);
/* Back to the cache; NULL is ignored; a pointer the pool never gave is a
 * g_critical. */
void nl_pool_release (NlPool *pool, void *ptr);
/* Returns every wholly free backend allocation to the backend. */
void nl_pool_trim (NlPool *pool);
void nl_pool_get_stats (NlPool *pool, NlPoolStats *stats);
/* "1,073,741,824": how the errors write byte counts (free it). */
char *nl_pool_format_bytes (guint64 nbytes);
/* The rounding every request gets (a multiple of 512). */
size_t nl_pool_round (size_t nbytes);

G_END_DECLS
