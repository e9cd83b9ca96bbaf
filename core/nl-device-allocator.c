/* nl-device-allocator.c — a caching allocator for device memory (see nl-device-allocator.h).
 *
 * Layout, after PyTorch's CUDACachingAllocator: every backend allocation is
 * a segment, cut into blocks that tile it in address order (a doubly linked
 * list, so a released block finds its neighbours at once). Free blocks wait
 * in one of two trees ordered by (size, address): blocks of small segments
 * (2 MiB, shared by requests up to 1 MiB) and blocks of large segments (one
 * per request above 1 MiB, rounded to 2 MiB), so that a big free block is
 * never chopped into crumbs for small tensors. The first tree entry not
 * below (size, address 0) is the best fit.
 *
 * Everything happens under one mutex, backend calls included: cudaMalloc
 * and cudaFree synchronise the device anyway, and they are rare once the
 * cache is warm. */
#include "core/nl-device-allocator.h"

#include <stdint.h>
#include <string.h>

#define NL_DEVICE_ALLOCATOR_ROUND ((size_t) 512)
#define NL_DEVICE_ALLOCATOR_SMALL_MAX ((size_t) 1 << 20) /* requests up to this share segments */
#define NL_DEVICE_ALLOCATOR_SEGMENT ((size_t) 2 << 20)   /* small segments; large ones round to this */

typedef struct NlDeviceAllocatorSegment NlDeviceAllocatorSegment;
typedef struct NlDeviceAllocatorBlock NlDeviceAllocatorBlock;

struct NlDeviceAllocatorBlock {
  char *ptr;
  size_t size;
  gboolean allocated;
  NlDeviceAllocatorSegment *segment;
  NlDeviceAllocatorBlock *prev, *next; /* neighbours in the segment, by address */
};

struct NlDeviceAllocatorSegment {
  char *base;
  size_t size;
  gboolean small;
  /* The block at base. Merging always keeps the lower block, so this one
   * lives as long as the segment. */
  NlDeviceAllocatorBlock *head;
};

struct NlDeviceAllocator {
  NlDeviceAllocatorBackend backend;
  char *device_name;
  GMutex lock;
  GTree *free_small;    /* NlDeviceAllocatorBlock* keys, free blocks of small segments */
  GTree *free_large;
  GHashTable *live;     /* ptr -> NlDeviceAllocatorBlock*, blocks handed out */
  GHashTable *segments; /* set of NlDeviceAllocatorSegment* */
  NlDeviceAllocatorStats stats;    /* cached is derived in nl_device_allocator_get_stats */
};

size_t
nl_device_allocator_round (size_t nbytes)
{
  if (nbytes == 0)
    return NL_DEVICE_ALLOCATOR_ROUND;
  /* nl_device_allocator_alloc refuses sizes where this would overflow */
  return (nbytes + NL_DEVICE_ALLOCATOR_ROUND - 1) / NL_DEVICE_ALLOCATOR_ROUND * NL_DEVICE_ALLOCATOR_ROUND;
}

static int
block_cmp (gconstpointer a, gconstpointer b, gpointer user)
{
  (void) user;
  const NlDeviceAllocatorBlock *x = a, *y = b;
  if (x->size != y->size)
    return x->size < y->size ? -1 : 1;
  uintptr_t px = (uintptr_t) x->ptr, py = (uintptr_t) y->ptr;
  return px < py ? -1 : px > py ? 1 : 0;
}

static GTree *
tree_of (NlDeviceAllocator *allocator, const NlDeviceAllocatorBlock *b)
{
  return b->segment->small ? allocator->free_small : allocator->free_large;
}

static void
tree_insert (NlDeviceAllocator *allocator, NlDeviceAllocatorBlock *b)
{
  g_tree_insert (tree_of (allocator, b), b, b);
}

static void
tree_remove (NlDeviceAllocator *allocator, NlDeviceAllocatorBlock *b)
{
  gboolean found = g_tree_remove (tree_of (allocator, b), b);
  g_assert (found);
}

NlDeviceAllocator *
nl_device_allocator_new (const NlDeviceAllocatorBackend *backend, const char *device_name)
{
  g_return_val_if_fail (backend != NULL && backend->alloc != NULL && backend->free != NULL, NULL);
  NlDeviceAllocator *allocator = g_new0 (NlDeviceAllocator, 1);
  allocator->backend = *backend;
  allocator->device_name = g_strdup (device_name ? device_name : "device");
  g_mutex_init (&allocator->lock);
  allocator->free_small = g_tree_new_full (block_cmp, NULL, NULL, NULL);
  allocator->free_large = g_tree_new_full (block_cmp, NULL, NULL, NULL);
  allocator->live = g_hash_table_new (g_direct_hash, g_direct_equal);
  allocator->segments = g_hash_table_new (g_direct_hash, g_direct_equal);
  return allocator;
}

/* Gives a segment and its blocks back to the backend; the caller has taken
 * its free blocks out of the trees (or is about to drop the trees). Lock held. */
static void
segment_release (NlDeviceAllocator *allocator, NlDeviceAllocatorSegment *seg)
{
  for (NlDeviceAllocatorBlock *b = seg->head, *next; b != NULL; b = next) {
    next = b->next;
    g_free (b);
  }
  allocator->backend.free (allocator->backend.user, seg->base);
  allocator->stats.reserved -= seg->size;
  allocator->stats.backend_frees++;
  g_hash_table_remove (allocator->segments, seg);
  g_free (seg);
}

static gboolean
segment_wholly_free (const NlDeviceAllocatorSegment *seg)
{
  return !seg->head->allocated && seg->head->next == NULL;
}

static void
trim_locked (NlDeviceAllocator *allocator)
{
  GPtrArray *victims = g_ptr_array_new ();
  GHashTableIter it;
  gpointer key;
  g_hash_table_iter_init (&it, allocator->segments);
  while (g_hash_table_iter_next (&it, &key, NULL))
    if (segment_wholly_free (key))
      g_ptr_array_add (victims, key);
  for (guint i = 0; i < victims->len; i++) {
    NlDeviceAllocatorSegment *seg = victims->pdata[i];
    tree_remove (allocator, seg->head);
    segment_release (allocator, seg);
  }
  g_ptr_array_free (victims, TRUE);
}

void
nl_device_allocator_trim (NlDeviceAllocator *allocator)
{
  g_return_if_fail (allocator != NULL);
  g_mutex_lock (&allocator->lock);
  trim_locked (allocator);
  g_mutex_unlock (&allocator->lock);
}

void
nl_device_allocator_free (NlDeviceAllocator *allocator)
{
  if (allocator == NULL)
    return;
  g_mutex_lock (&allocator->lock);
  guint n_live = g_hash_table_size (allocator->live);
  if (n_live > 0)
    g_warning ("memory allocator of %s freed with %u block%s (%" G_GSIZE_FORMAT " bytes) still in use",
               allocator->device_name, n_live, n_live == 1 ? "" : "s", allocator->stats.in_use);
  /* the trees only point into blocks that segment_release frees */
  g_tree_destroy (allocator->free_small);
  g_tree_destroy (allocator->free_large);
  GHashTableIter it;
  gpointer key;
  GPtrArray *all = g_ptr_array_new ();
  g_hash_table_iter_init (&it, allocator->segments);
  while (g_hash_table_iter_next (&it, &key, NULL))
    g_ptr_array_add (all, key);
  for (guint i = 0; i < all->len; i++)
    segment_release (allocator, all->pdata[i]);
  g_ptr_array_free (all, TRUE);
  g_hash_table_destroy (allocator->live);
  g_hash_table_destroy (allocator->segments);
  g_mutex_unlock (&allocator->lock);
  g_mutex_clear (&allocator->lock);
  g_free (allocator->device_name);
  g_free (allocator);
}

/* The smallest free block of the tree with at least size bytes, or NULL. */
static NlDeviceAllocatorBlock *
best_fit (GTree *tree, size_t size)
{
  NlDeviceAllocatorBlock probe = { .ptr = NULL, .size = size };
  GTreeNode *node = g_tree_lower_bound (tree, &probe);
  return node ? g_tree_node_key (node) : NULL;
}

/* GiB from 1 GiB up, MiB below: a person reads "70.2 GiB" or "512.0 MiB". */
static char *
human_bytes (size_t v)
{
  const double gib = 1024.0 * 1024.0 * 1024.0;
  if ((double) v >= gib)
    return g_strdup_printf ("%.1f GiB", (double) v / gib);
  return g_strdup_printf ("%.1f MiB", (double) v / (1024.0 * 1024.0));
}

/* Lock held. */
static void
set_nomem (NlDeviceAllocator *allocator, size_t nbytes, const char *what, GError **error)
{
  g_autofree char *asked = nl_backend_format_bytes (nbytes);
  g_autofree char *held = human_bytes (allocator->stats.reserved);
  g_autofree char *used = human_bytes (allocator->stats.in_use);
  g_set_error (error, NL_BACKEND_ERROR, NL_BACKEND_ERROR_NOMEM,
               "out of memory on %s: %s asked for %s bytes (%.1f MiB); netloom holds %s there (%s in use)",
               allocator->device_name, what ? what : "a request", asked,
               (double) nbytes / (1024.0 * 1024.0), held, used);
}

/* A new segment for a request of size bytes, with one free block (in no
 * tree) covering it; NULL when the backend has no room even after a trim.
 * Lock held. */
static NlDeviceAllocatorBlock *
segment_new (NlDeviceAllocator *allocator, size_t size, gboolean small)
{
  size_t seg_size = small ? NL_DEVICE_ALLOCATOR_SEGMENT
                          : (size + NL_DEVICE_ALLOCATOR_SEGMENT - 1) / NL_DEVICE_ALLOCATOR_SEGMENT * NL_DEVICE_ALLOCATOR_SEGMENT;
  void *base = allocator->backend.alloc (allocator->backend.user, seg_size);
  if (base == NULL) {
    /* cached blocks of the other kind, or of awkward sizes, may be all
     * that stands between the request and success */
    trim_locked (allocator);
    base = allocator->backend.alloc (allocator->backend.user, seg_size);
    if (base == NULL)
      return NULL;
  }
  NlDeviceAllocatorSegment *seg = g_new0 (NlDeviceAllocatorSegment, 1);
  seg->base = base;
  seg->size = seg_size;
  seg->small = small;
  NlDeviceAllocatorBlock *b = g_new0 (NlDeviceAllocatorBlock, 1);
  b->ptr = base;
  b->size = seg_size;
  b->segment = seg;
  seg->head = b;
  g_hash_table_add (allocator->segments, seg);
  allocator->stats.reserved += seg_size;
  allocator->stats.backend_allocs++;
  return b;
}

void *
nl_device_allocator_alloc (NlDeviceAllocator *allocator, size_t nbytes, const char *what, GError **error)
{
  g_return_val_if_fail (allocator != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  g_mutex_lock (&allocator->lock);
  /* sizes whose segment rounding would overflow cannot exist anyway */
  if (nbytes > SIZE_MAX - 2 * NL_DEVICE_ALLOCATOR_SEGMENT) {
    set_nomem (allocator, nbytes, what, error);
    g_mutex_unlock (&allocator->lock);
    return NULL;
  }
  size_t size = nl_device_allocator_round (nbytes);
  gboolean small = size <= NL_DEVICE_ALLOCATOR_SMALL_MAX;

  NlDeviceAllocatorBlock *b = best_fit (small ? allocator->free_small : allocator->free_large, size);
  if (b != NULL) {
    tree_remove (allocator, b);
  } else {
    b = segment_new (allocator, size, small);
    if (b == NULL) {
      set_nomem (allocator, nbytes, what, error);
      g_mutex_unlock (&allocator->lock);
      return NULL;
    }
  }

  /* Split off the tail when it can serve another request of the same
   * kind: any 512 bytes for small segments, more than 1 MiB for large ones
   * (a smaller tail of a large segment would never be asked for there, so
   * it stays with the block, as in PyTorch). */
  size_t rest = b->size - size;
  if (small ? rest >= NL_DEVICE_ALLOCATOR_ROUND : rest > NL_DEVICE_ALLOCATOR_SMALL_MAX) {
    NlDeviceAllocatorBlock *r = g_new0 (NlDeviceAllocatorBlock, 1);
    r->ptr = b->ptr + size;
    r->size = rest;
    r->segment = b->segment;
    r->prev = b;
    r->next = b->next;
    if (b->next)
      b->next->prev = r;
    b->next = r;
    b->size = size;
    tree_insert (allocator, r);
  }

  b->allocated = TRUE;
  g_hash_table_insert (allocator->live, b->ptr, b);
  allocator->stats.in_use += b->size;
  allocator->stats.peak_in_use = MAX (allocator->stats.peak_in_use, allocator->stats.in_use);
  g_mutex_unlock (&allocator->lock);
  return b->ptr;
}

void
nl_device_allocator_release (NlDeviceAllocator *allocator, void *ptr)
{
  g_return_if_fail (allocator != NULL);
  if (ptr == NULL)
    return;
  g_mutex_lock (&allocator->lock);
  NlDeviceAllocatorBlock *b = g_hash_table_lookup (allocator->live, ptr);
  if (b == NULL) {
    g_mutex_unlock (&allocator->lock);
    g_critical ("nl_device_allocator_release: %p was not handed out by the allocator of %s", ptr, allocator->device_name);
    return;
  }
  g_hash_table_remove (allocator->live, ptr);
  allocator->stats.in_use -= b->size;
  b->allocated = FALSE;

  /* merge with free neighbours, always keeping the lower block */
  NlDeviceAllocatorBlock *p = b->prev;
  if (p != NULL && !p->allocated) {
    tree_remove (allocator, p);
    p->size += b->size;
    p->next = b->next;
    if (b->next)
      b->next->prev = p;
    g_free (b);
    b = p;
  }
  NlDeviceAllocatorBlock *n = b->next;
  if (n != NULL && !n->allocated) {
    tree_remove (allocator, n);
    b->size += n->size;
    b->next = n->next;
    if (n->next)
      n->next->prev = b;
    g_free (n);
  }
  tree_insert (allocator, b);
  g_mutex_unlock (&allocator->lock);
}

void
nl_device_allocator_get_stats (NlDeviceAllocator *allocator, NlDeviceAllocatorStats *stats)
{
  g_return_if_fail (allocator != NULL && stats != NULL);
  g_mutex_lock (&allocator->lock);
  *stats = allocator->stats;
  stats->cached = allocator->stats.reserved - allocator->stats.in_use;
  g_mutex_unlock (&allocator->lock);
}
