/* nl-device-allocator.h — a caching allocator for device memory.
 *
 * A training step allocates and frees the same sizes every time; going to
 * cudaMalloc/cudaFree for each would synchronise the device and cost
 * milliseconds. The allocator keeps freed blocks and hands them out again:
 * sizes are rounded up to 512 bytes, a request takes the smallest cached
 * block that fits (best fit), and a block much larger than asked for is
 * split, the rest staying cached. Only when nothing cached fits does it ask
 * the backend; when the backend has no room, every cached block that is
 * wholly free is given back and the request tried once more, and only then
 * does it fail with one error naming what asked, the bytes, and what the
 * allocator holds.
 *
 * The backend is a pair of functions, so the same allocator serves a CUDA device
 * (core/cuda) and tests (a fake device with a byte limit). Every call is
 * thread-safe. Memory is stream-ordered: with one stream per device, a
 * block freed by a kernel's owner may be handed to the next kernel at once,
 * as PyTorch's caching allocator does. */
#pragma once

#include <glib.h>
#include <stddef.h>

#include "core/nl-backend.h"

G_BEGIN_DECLS

typedef struct {
  /* NULL when the device has no room for nbytes */
  void *(*alloc) (gpointer user, size_t nbytes);
  void (*free) (gpointer user, void *ptr);
  gpointer user;
} NlDeviceAllocatorBackend;

typedef struct {
  size_t in_use;          /* bytes handed out (rounded; a block above 1 MiB also
                           * keeps a tail of up to 1 MiB that is not worth splitting) */
  size_t cached;          /* bytes held from the backend but not handed out */
  size_t peak_in_use;
  size_t reserved;        /* in_use + cached: what the backend gave */
  guint64 backend_allocs; /* calls to backend->alloc that succeeded */
  guint64 backend_frees;
} NlDeviceAllocatorStats;

typedef struct NlDeviceAllocator NlDeviceAllocator;

/* device_name ("cuda:0") is used in error messages. */
NlDeviceAllocator *nl_device_allocator_new (const NlDeviceAllocatorBackend *backend, const char *device_name);
/* Gives every block back to the backend; blocks still handed out are a
 * caller's bug and are reported with g_warning. */
void nl_device_allocator_free (NlDeviceAllocator *allocator);
/* At least nbytes (0 is allowed: a valid unique pointer of 512 bytes).
 * what names the asker in the error: "conv1 (Conv2D) forward".
 * The error (NL_BACKEND_ERROR_NOMEM, core/nl-backend.h) reads like:
 *   out of memory on cuda:0: conv1 (Conv2D) forward asked for 1,073,741,824 bytes (1024.0 MiB);
 *   netloom holds 70.2 GiB there (69.9 GiB in use) */
void *nl_device_allocator_alloc (NlDeviceAllocator *allocator, size_t nbytes, const char *what, GError **error);
/* Back to the cache; NULL is ignored; a pointer the allocator never gave is a
 * g_critical. */
void nl_device_allocator_release (NlDeviceAllocator *allocator, void *ptr);
/* Returns every wholly free backend allocation to the backend. */
void nl_device_allocator_trim (NlDeviceAllocator *allocator);
void nl_device_allocator_get_stats (NlDeviceAllocator *allocator, NlDeviceAllocatorStats *stats);
/* The rounding every request gets (a multiple of 512). */
size_t nl_device_allocator_round (size_t nbytes);

G_END_DECLS
