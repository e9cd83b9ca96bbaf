/* nl-pool.c — a caching allocator for device memory (see nl-pool.h).
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
#include "ops/nl-pool.h"

#include <stdint.h>
#include <string.h>

#define NL_POOL_ROUND ((size_t) 512)
#define NL_POOL_SMALL_MAX ((size_t) 1 << 20) /* requests up to this share segments */
#define NL_POOL_SEGMENT ((size_t) 2 << 20)   /* small segments; large ones round to this */

G_DEFINE_QUARK (nl-pool-error-quark, nl_pool_error)

typedef struct NlPoolSegment NlPoolSegment;
typedef struct NlPoolBlock NlPoolBlock;

struct NlPoolBlock {
  char *ptr;
  size_t size;
  gboolean allocated;
  NlPoolSegment *segment;
  NlPoolBlock *prev, *next; /* neighbours in the segment, by address */
};

struct NlPoolSegment {
  char *base;
  size_t size;
  gboolean small;
  /* The block at base. Merging always keeps the lower block, so this one
   * lives as long as the segment. */
  NlPoolBlock *head;
};

struct NlPool {
  NlPoolBackend backend;
  char *device_name;
  GMutex lock;
  GTree *free_small;    /* NlPoolBlock* keys, free blocks of small segments */
  GTree *free_large;
  GHashTable *live;     /* ptr -> NlPoolBlock*, blocks handed out */
  GHashTable *segments; /* set of NlPoolSegment* */
  NlPoolStats stats;    /* cached is derived in nl_pool_get_stats */
};

size_t
nl_pool_round (size_t nbytes)
{
  if (nbytes == 0)
    return NL_POOL_ROUND;
  /* nl_pool_alloc refuses sizes where this would overflow */
  return (nbytes + NL_POOL_ROUND - 1) / NL_POOL_ROUND * NL_POOL_ROUND;
}

static int
block_cmp (gconstpointer a, gconstpointer b, gpointer user)
{
  (void) user;
  const NlPoolBlock *x = a, *y = b;
  if (x->size != y->size)
    return x->size < y->size ? -1 : 1;
  uintptr_t px = (uintptr_t) x->ptr, py = (uintptr_t) y->ptr;
  return px < py ? -1 : px > py ? 1 : 0;
}

static GTree *
tree_of (NlPool *pool, const NlPoolBlock *b)
{
  return b->segment->small ? pool->free_small : pool->free_large;
}

static void
tree_insert (NlPool *pool, NlPoolBlock *b)
{
  g_tree_insert (tree_of (pool, b), b, b);
}

static void
tree_remove (NlPool *pool, NlPoolBlock *b)
{
  gboolean found = g_tree_remove (tree_of (pool, b), b);
  g_assert (found);
}

NlPool *
nl_pool_new (const NlPoolBackend *backend, const char *device_name)
{
  g_return_val_if_fail (backend != NULL && backend->alloc != NULL && backend->free != NULL, NULL);
  NlPool *pool = g_new0 (NlPool, 1);
  pool->backend = *backend;
  pool->device_name = g_strdup (device_name ? device_name : "device");
  g_mutex_init (&pool->lock);
  pool->free_small = g_tree_new_full (block_cmp, NULL, NULL, NULL);
  pool->free_large = g_tree_new_full (block_cmp, NULL, NULL, NULL);
  pool->live = g_hash_table_new (g_direct_hash, g_direct_equal);
  pool->segments = g_hash_table_new (g_direct_hash, g_direct_equal);
  return pool;
}

/* Gives a segment and its blocks back to the backend; the caller has taken
 * its free blocks out of the trees (or is about to drop the trees). Lock held. */
static void
segment_release (NlPool *pool, NlPoolSegment *seg)
{
  for (NlPoolBlock *b = seg->head, *next; b != NULL; b = next) {
    next = b->next;
    g_free (b);
  }
  pool->backend.free (pool->backend.user, seg->base);
  pool->stats.reserved -= seg->size;
  pool->stats.backend_frees++;
  g_hash_table_remove (pool->segments, seg);
  g_free (seg);
}

static gboolean
segment_wholly_free (const NlPoolSegment *seg)
{
  return !seg->head->allocated && seg->head->next == NULL;
}

static void
trim_locked (NlPool *pool)
{
  GPtrArray *victims = g_ptr_array_new ();
  GHashTableIter it;
  gpointer key;
  g_hash_table_iter_init (&it, pool->segments);
  while (g_hash_table_iter_next (&it, &key, NULL))
    if (segment_wholly_free (key))
      g_ptr_array_add (victims, key);
  for (guint i = 0; i < victims->len; i++) {
    NlPoolSegment *seg = victims->pdata[i];
    tree_remove (pool, seg->head);
    segment_release (pool, seg);
  }
  g_ptr_array_free (victims, TRUE);
}

void
nl_pool_trim (NlPool *pool)
{
  g_return_if_fail (pool != NULL);
  g_mutex_lock (&pool->lock);
  trim_locked (pool);
  g_mutex_unlock (&pool->lock);
}

void
nl_pool_free (NlPool *pool)
{
  if (pool == NULL)
    return;
  g_mutex_lock (&pool->lock);
  guint n_live = g_hash_table_size (pool->live);
  if (n_live > 0)
    g_warning ("memory pool of %s freed with %u block%s (%" G_GSIZE_FORMAT " bytes) still in use",
               pool->device_name, n_live, n_live == 1 ? "" : "s", pool->stats.in_use);
  /* the trees only point into blocks that segment_release frees */
  g_tree_destroy (pool->free_small);
  g_tree_destroy (pool->free_large);
  GHashTableIter it;
  gpointer key;
  GPtrArray *all = g_ptr_array_new ();
  g_hash_table_iter_init (&it, pool->segments);
  while (g_hash_table_iter_next (&it, &key, NULL))
    g_ptr_array_add (all, key);
  for (guint i = 0; i < all->len; i++)
    segment_release (pool, all->pdata[i]);
  g_ptr_array_free (all, TRUE);
  g_hash_table_destroy (pool->live);
  g_hash_table_destroy (pool->segments);
  g_mutex_unlock (&pool->lock);
  g_mutex_clear (&pool->lock);
  g_free (pool->device_name);
  g_free (pool);
}

/* The smallest free block of the tree with at least size bytes, or NULL. */
static NlPoolBlock *
best_fit (GTree *tree, size_t size)
{
  NlPoolBlock probe = { .ptr = NULL, .size = size };
  GTreeNode *node = g_tree_lower_bound (tree, &probe);
  return node ? g_tree_node_key (node) : NULL;
}

char *
nl_pool_format_bytes (guint64 v)
{
  char digits[32];
  g_snprintf (digits, sizeof digits, "%" G_GUINT64_FORMAT, v);
  size_t n = strlen (digits);
  GString *s = g_string_sized_new (n + n / 3);
  for (size_t i = 0; i < n; i++)
    {
      if (i > 0 && (n - i) % 3 == 0)
        g_string_append_c (s, ',');
      g_string_append_c (s, digits[i]);
    }
  return g_string_free (s, FALSE);
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
set_nomem (NlPool *pool, size_t nbytes, const char *what, GError **error)
{
  g_autofree char *asked = nl_pool_format_bytes (nbytes);
  g_autofree char *held = human_bytes (pool->stats.reserved);
  g_autofree char *used = human_bytes (pool->stats.in_use);
  g_set_error (error, NL_POOL_ERROR, NL_POOL_ERROR_NOMEM,
               "out of memory on %s: %s asked for %s bytes (%.1f MiB); netloom holds %s there (%s in use)",
               pool->device_name, what ? what : "a request", asked,
               (double) nbytes / (1024.0 * 1024.0), held, used);
}

/* A new segment for a request of size bytes, with one free block (in no
 * tree) covering it; NULL when the backend has no room even after a trim.
 * Lock held. */
static NlPoolBlock *
segment_new (NlPool *pool, size_t size, gboolean small)
{
  size_t seg_size = small ? NL_POOL_SEGMENT
                          : (size + NL_POOL_SEGMENT - 1) / NL_POOL_SEGMENT * NL_POOL_SEGMENT;
  void *base = pool->backend.alloc (pool->backend.user, seg_size);
  if (base == NULL) {
    /* cached blocks of the other kind, or of awkward sizes, may be all
     * that stands between the request and success */
    trim_locked (pool);
    base = pool->backend.alloc (pool->backend.user, seg_size);
    if (base == NULL)
      return NULL;
  }
  NlPoolSegment *seg = g_new0 (NlPoolSegment, 1);
  seg->base = base;
  seg->size = seg_size;
  seg->small = small;
  NlPoolBlock *b = g_new0 (NlPoolBlock, 1);
  b->ptr = base;
  b->size = seg_size;
  b->segment = seg;
  seg->head = b;
  g_hash_table_add (pool->segments, seg);
  pool->stats.reserved += seg_size;
  pool->stats.backend_allocs++;
  return b;
}

void *
nl_pool_alloc (NlPool *pool, size_t nbytes, const char *what, GError **error)
{
  g_return_val_if_fail (pool != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  g_mutex_lock (&pool->lock);
  /* sizes whose segment rounding would overflow cannot exist anyway */
  if (nbytes > SIZE_MAX - 2 * NL_POOL_SEGMENT) {
    set_nomem (pool, nbytes, what, error);
    g_mutex_unlock (&pool->lock);
    return NULL;
  }
  size_t size = nl_pool_round (nbytes);
  gboolean small = size <= NL_POOL_SMALL_MAX;

  NlPoolBlock *b = best_fit (small ? pool->free_small : pool->free_large, size);
  if (b != NULL) {
    tree_remove (pool, b);
  } else {
    b = segment_new (pool, size, small);
    if (b == NULL) {
      set_nomem (pool, nbytes, what, error);
      g_mutex_unlock (&pool->lock);
      return NULL;
    }
  }

  /* Split off the tail when it can serve another request of the same
   * kind: any 512 bytes for small segments, more than 1 MiB for large ones
   * (a smaller tail of a large segment would never be asked for there, so
   * it stays with the block, as in PyTorch). */
  size_t rest = b->size - size;
  if (small ? rest >= NL_POOL_ROUND : rest > NL_POOL_SMALL_MAX) {
    NlPoolBlock *r = g_new0 (NlPoolBlock, 1);
    r->ptr = b->ptr + size;
    r->size = rest;
    r->segment = b->segment;
    r->prev = b;
    r->next = b->next;
    if (b->next)
      b->next->prev = r;
    b->next = r;
    b->size = size;
    tree_insert (pool, r);
  }

  b->allocated = TRUE;
  g_hash_table_insert (pool->live, b->ptr, b);
  pool->stats.in_use += b->size;
  pool->stats.peak_in_use = MAX (pool->stats.peak_in_use, pool->stats.in_use);
  g_mutex_unlock (&pool->lock);
  return b->ptr;
}

void
nl_pool_release (NlPool *pool, void *ptr)
{
  g_return_if_fail (pool != NULL);
  if (ptr == NULL)
    return;
  g_mutex_lock (&pool->lock);
  NlPoolBlock *b = g_hash_table_lookup (pool->live, ptr);
  if (b == NULL) {
    g_mutex_unlock (&pool->lock);
    g_critical ("nl_pool_release: %p was not handed out by the pool of %s", ptr, pool->device_name);
    return;
  }
  g_hash_table_remove (pool->live, ptr);
  pool->stats.in_use -= b->size;
  b->allocated = FALSE;

  /* merge with free neighbours, always keeping the lower block */
  NlPoolBlock *p = b->prev;
  if (p != NULL && !p->allocated) {
    tree_remove (pool, p);
    p->size += b->size;
    p->next = b->next;
    if (b->next)
      b->next->prev = p;
    g_free (b);
    b = p;
  }
  NlPoolBlock *n = b->next;
  if (n != NULL && !n->allocated) {
    tree_remove (pool, n);
    b->size += n->size;
    b->next = n->next;
    if (n->next)
      n->next->prev = b;
    g_free (n);
  }
  tree_insert (pool, b);
  g_mutex_unlock (&pool->lock);
}

void
nl_pool_get_stats (NlPool *pool, NlPoolStats *stats)
{
  g_return_if_fail (pool != NULL && stats != NULL);
  g_mutex_lock (&pool->lock);
  *stats = pool->stats;
  stats->cached = pool->stats.reserved - pool->stats.in_use;
  g_mutex_unlock (&pool->lock);
}
