/* test-device-allocator.c — the caching device allocator (core/nl-device-allocator.c) against a fake
 * device: a backend with a byte limit that counts its calls and knows every
 * allocation it made, so each test can tell exactly when the allocator went to
 * the "device" and whether everything came back.
 *
 * Most tests use a virtual fake that hands out addresses nobody touches
 * (the allocator never dereferences them), which allows gigabyte figures; the
 * thread and trim tests use real memory and write into every block. */
#include <stdint.h>
#include <string.h>

#include "core/nl-device-allocator.h"

#define KiB ((size_t) 1024)
#define MiB ((size_t) 1024 * 1024)
#define GiB ((size_t) 1024 * 1024 * 1024)

typedef struct {
  GMutex lock;
  size_t limit, used;
  gboolean virtual_mem;  /* addresses only, never backed */
  uintptr_t next_virtual;
  GHashTable *sizes;     /* ptr -> size of every live backend allocation */
  guint64 alloc_calls, alloc_ok, frees;
} FakeDevice;

static void *
fake_alloc (gpointer user, size_t n)
{
  FakeDevice *d = user;
  g_mutex_lock (&d->lock);
  d->alloc_calls++;
  void *p = NULL;
  if (n <= d->limit - d->used) {
    if (d->virtual_mem) {
      p = (void *) d->next_virtual;
      d->next_virtual += n + 2 * MiB; /* a gap: blocks of two segments never touch */
    } else {
      p = g_malloc (n);
    }
    g_hash_table_insert (d->sizes, p, GSIZE_TO_POINTER (n));
    d->used += n;
    d->alloc_ok++;
  }
  g_mutex_unlock (&d->lock);
  return p;
}

static void
fake_free (gpointer user, void *p)
{
  FakeDevice *d = user;
  g_mutex_lock (&d->lock);
  gpointer size;
  /* the allocator must free only what the device gave, and once */
  g_assert_true (g_hash_table_lookup_extended (d->sizes, p, NULL, &size));
  g_hash_table_remove (d->sizes, p);
  d->used -= GPOINTER_TO_SIZE (size);
  d->frees++;
  if (!d->virtual_mem)
    g_free (p);
  g_mutex_unlock (&d->lock);
}

static FakeDevice *
fake_new (size_t limit, gboolean virtual_mem)
{
  FakeDevice *d = g_new0 (FakeDevice, 1);
  g_mutex_init (&d->lock);
  d->limit = limit;
  d->virtual_mem = virtual_mem;
  d->next_virtual = (uintptr_t) 1 << 40;
  d->sizes = g_hash_table_new (g_direct_hash, g_direct_equal);
  return d;
}

static guint
fake_live (FakeDevice *d)
{
  return g_hash_table_size (d->sizes);
}

static void
fake_destroy (FakeDevice *d)
{
  g_assert_cmpuint (fake_live (d), ==, 0);
  g_hash_table_destroy (d->sizes);
  g_mutex_clear (&d->lock);
  g_free (d);
}

static NlDeviceAllocator *
pool_on (FakeDevice *d)
{
  NlDeviceAllocatorBackend backend = { fake_alloc, fake_free, d };
  return nl_device_allocator_new (&backend, "fake:0");
}

static NlDeviceAllocatorStats
stats_of (NlDeviceAllocator *allocator)
{
  NlDeviceAllocatorStats s;
  nl_device_allocator_get_stats (allocator, &s);
  /* the invariant every other figure rests on */
  g_assert_cmpuint (s.reserved, ==, s.in_use + s.cached);
  return s;
}

static void *
alloc_ok (NlDeviceAllocator *allocator, size_t n)
{
  g_autoptr (GError) error = NULL;
  void *p = nl_device_allocator_alloc (allocator, n, "test", &error);
  g_assert_no_error (error);
  g_assert_nonnull (p);
  return p;
}

#define OFF(p, q) ((gssize) ((char *) (p) - (char *) (q)))

static void
test_round (void)
{
  g_assert_cmpuint (nl_device_allocator_round (0), ==, 512);
  g_assert_cmpuint (nl_device_allocator_round (1), ==, 512);
  g_assert_cmpuint (nl_device_allocator_round (512), ==, 512);
  g_assert_cmpuint (nl_device_allocator_round (513), ==, 1024);
  g_assert_cmpuint (nl_device_allocator_round (1000000), ==, 1954 * 512); /* ceil (1e6 / 512) = 1954 */
  g_assert_cmpuint (nl_device_allocator_round (8 * MiB), ==, 8 * MiB);

  FakeDevice *d = fake_new (64 * MiB, TRUE);
  NlDeviceAllocator *allocator = pool_on (d);
  /* 0 bytes is a real, distinct block; consecutive small blocks are carved
   * 512 bytes apart from the same 2 MiB segment */
  void *a = alloc_ok (allocator, 0);
  void *b = alloc_ok (allocator, 1);
  void *c = alloc_ok (allocator, 513);
  g_assert_cmpint (OFF (b, a), ==, 512);
  g_assert_cmpint (OFF (c, b), ==, 512);
  NlDeviceAllocatorStats s = stats_of (allocator);
  g_assert_cmpuint (s.in_use, ==, 512 + 512 + 1024);
  g_assert_cmpuint (s.reserved, ==, 2 * MiB);
  g_assert_cmpuint (s.backend_allocs, ==, 1);
  g_assert_cmpuint (d->used, ==, 2 * MiB);
  nl_device_allocator_release (allocator, a);
  nl_device_allocator_release (allocator, b);
  nl_device_allocator_release (allocator, c);
  nl_device_allocator_release (allocator, NULL); /* ignored */
  nl_device_allocator_free (allocator);
  fake_destroy (d);
}

/* A training step: forward keeps its activations, backward allocates a
 * gradient per layer and drops the activation it consumed. */
static const size_t forward_sizes[10] = {
  1000, 4096, 65536, 300000, 1 * MiB, 2 * MiB + 1, 8 * MiB, 5 * MiB, 150000, 2048,
};
static const size_t backward_sizes[10] = {
  8 * MiB, 700000, 3 * MiB, 12000, 1 * MiB + 512, 12288, 6 * MiB, 40000, 1500, 8 * MiB - 512,
};

static void
training_step (NlDeviceAllocator *allocator)
{
  void *act[10], *grad[10];
  for (int i = 0; i < 10; i++)
    act[i] = alloc_ok (allocator, forward_sizes[i]);
  for (int i = 0; i < 10; i++) {
    grad[i] = alloc_ok (allocator, backward_sizes[i]);
    nl_device_allocator_release (allocator, act[9 - i]);
    if (i >= 2) /* a gradient lives until the optimizer has used it */
      nl_device_allocator_release (allocator, grad[i - 2]);
  }
  nl_device_allocator_release (allocator, grad[8]);
  nl_device_allocator_release (allocator, grad[9]);
}

static void
test_reuse (void)
{
  FakeDevice *d = fake_new (1 * GiB, TRUE);
  NlDeviceAllocator *allocator = pool_on (d);
  training_step (allocator);
  NlDeviceAllocatorStats first = stats_of (allocator);
  g_assert_cmpuint (first.in_use, ==, 0);
  g_assert_cmpuint (first.backend_allocs, >, 1);
  g_assert_cmpuint (first.backend_frees, ==, 0);
  for (int step = 1; step < 100; step++) {
    training_step (allocator);
    NlDeviceAllocatorStats s = stats_of (allocator);
    g_assert_cmpuint (s.backend_allocs, ==, first.backend_allocs);
    g_assert_cmpuint (s.backend_frees, ==, 0);
    g_assert_cmpuint (s.reserved, ==, first.reserved);
    g_assert_cmpuint (s.in_use, ==, 0);
  }
  g_assert_cmpuint (d->alloc_calls, ==, first.backend_allocs);
  nl_device_allocator_free (allocator);
  fake_destroy (d);
}

static void
test_best_fit (void)
{
  FakeDevice *d = fake_new (64 * MiB, TRUE);
  NlDeviceAllocator *allocator = pool_on (d);
  /* holes of 4 KiB, 2 KiB and 8 KiB, kept apart by live guards, before the
   * segment's big free tail */
  void *h4 = alloc_ok (allocator, 4 * KiB);
  void *g1 = alloc_ok (allocator, 512);
  void *h2 = alloc_ok (allocator, 2 * KiB);
  void *g2 = alloc_ok (allocator, 512);
  void *h8 = alloc_ok (allocator, 8 * KiB);
  void *g3 = alloc_ok (allocator, 512);
  nl_device_allocator_release (allocator, h4);
  nl_device_allocator_release (allocator, h2);
  nl_device_allocator_release (allocator, h8);

  /* 1.5 KiB: every hole fits; the 2 KiB one is the smallest */
  void *p = alloc_ok (allocator, 1536);
  g_assert_true (p == h2);
  /* 3 KiB: the 4 KiB hole (only 512 B of the 2 KiB one is left) */
  void *q = alloc_ok (allocator, 3 * KiB);
  g_assert_true (q == h4);
  /* 6 KiB: only the 8 KiB hole among the holes */
  void *r = alloc_ok (allocator, 6 * KiB);
  g_assert_true (r == h8);
  /* 512 B: the leftovers are 512 B (of h2), 1 KiB (of h4), 2 KiB (of h8)
   * and the segment's tail: the 512 B one fits exactly */
  void *s = alloc_ok (allocator, 512);
  g_assert_cmpint (OFF (s, h2), ==, 1536);
  g_assert_cmpuint (stats_of (allocator).backend_allocs, ==, 1);

  /* large segments: free 4 MiB and 8 MiB ones; 3 MiB takes the 4 MiB */
  void *l8 = alloc_ok (allocator, 8 * MiB);
  void *l4 = alloc_ok (allocator, 4 * MiB);
  nl_device_allocator_release (allocator, l8);
  nl_device_allocator_release (allocator, l4);
  void *l3 = alloc_ok (allocator, 3 * MiB);
  g_assert_true (l3 == l4);
  g_assert_cmpuint (stats_of (allocator).backend_allocs, ==, 3);
  /* small requests never take large blocks: 64 KiB comes from the small
   * segment's tail, not from the free 8 MiB segment */
  void *small = alloc_ok (allocator, 64 * KiB);
  g_assert_cmpint (OFF (small, h4), >, 0);
  g_assert_cmpint (OFF (small, h4), <, (gssize) (2 * MiB));

  void *all[] = { g1, g2, g3, p, q, r, s, l3, small };
  for (guint i = 0; i < G_N_ELEMENTS (all); i++)
    nl_device_allocator_release (allocator, all[i]);
  nl_device_allocator_free (allocator);
  fake_destroy (d);
}

static void
test_split_merge (void)
{
  FakeDevice *d = fake_new (64 * MiB, TRUE);
  NlDeviceAllocator *allocator = pool_on (d);
  void *a = alloc_ok (allocator, 1 * KiB);
  void *b = alloc_ok (allocator, 2 * KiB);
  void *c = alloc_ok (allocator, 3 * KiB);
  void *g = alloc_ok (allocator, 512);
  /* split: each carved right after the previous one */
  g_assert_cmpint (OFF (b, a), ==, 1024);
  g_assert_cmpint (OFF (c, b), ==, 2048);
  g_assert_cmpint (OFF (g, c), ==, 3072);

  /* b merges with both freed neighbours into one 6 KiB block; without the
   * merge, 6 KiB would come from the tail after g */
  nl_device_allocator_release (allocator, a);
  nl_device_allocator_release (allocator, c);
  nl_device_allocator_release (allocator, b);
  void *abc = alloc_ok (allocator, 6 * KiB);
  g_assert_true (abc == a);

  /* merge with the lower neighbour only */
  void *x = alloc_ok (allocator, 1 * KiB);
  void *y = alloc_ok (allocator, 1 * KiB);
  void *g2 = alloc_ok (allocator, 512);
  g_assert_cmpint (OFF (x, g), ==, 512);
  nl_device_allocator_release (allocator, x);
  nl_device_allocator_release (allocator, y);
  void *xy = alloc_ok (allocator, 2 * KiB);
  g_assert_true (xy == x);

  /* merge with the upper neighbour only */
  void *z = alloc_ok (allocator, 1 * KiB);
  void *w = alloc_ok (allocator, 1 * KiB);
  void *g3 = alloc_ok (allocator, 512);
  nl_device_allocator_release (allocator, w);
  nl_device_allocator_release (allocator, z);
  void *zw = alloc_ok (allocator, 2 * KiB);
  g_assert_true (zw == z);

  NlDeviceAllocatorStats s = stats_of (allocator);
  g_assert_cmpuint (s.backend_allocs, ==, 1);
  g_assert_cmpuint (s.in_use, ==, 6 * KiB + 512 + 2 * KiB + 512 + 2 * KiB + 512);

  /* everything back: the segment is one free block again, which only a
   * whole-segment block can be, and trim returns it */
  void *all[] = { abc, g, xy, g2, zw, g3 };
  for (guint i = 0; i < G_N_ELEMENTS (all); i++)
    nl_device_allocator_release (allocator, all[i]);
  void *whole = alloc_ok (allocator, 1 * MiB);
  g_assert_true (whole == a);
  nl_device_allocator_release (allocator, whole);
  nl_device_allocator_trim (allocator);
  s = stats_of (allocator);
  g_assert_cmpuint (s.reserved, ==, 0);
  g_assert_cmpuint (s.backend_frees, ==, 1);
  g_assert_cmpuint (fake_live (d), ==, 0);

  /* large blocks split only when the tail exceeds 1 MiB */
  void *big = alloc_ok (allocator, 8 * MiB);
  nl_device_allocator_release (allocator, big);
  void *l1 = alloc_ok (allocator, 5 * MiB);        /* tail 3 MiB: split */
  void *l2 = alloc_ok (allocator, 2 * MiB + 512);  /* from that tail; 1 MiB - 512 left: kept */
  g_assert_true (l1 == big);
  g_assert_cmpint (OFF (l2, l1), ==, (gssize) (5 * MiB));
  s = stats_of (allocator);
  g_assert_cmpuint (s.in_use, ==, 8 * MiB);
  g_assert_cmpuint (s.backend_allocs, ==, 2);
  nl_device_allocator_release (allocator, l1);
  nl_device_allocator_release (allocator, l2);
  nl_device_allocator_free (allocator);
  fake_destroy (d);
}

static void
test_oom (void)
{
  FakeDevice *d = fake_new (64 * MiB, TRUE);
  NlDeviceAllocator *allocator = pool_on (d);
  void *live = alloc_ok (allocator, 10 * MiB);
  g_autoptr (GError) error = NULL;
  void *p = nl_device_allocator_alloc (allocator, 100 * MiB, "conv1 (Conv2D) forward", &error);
  g_assert_null (p);
  g_assert_error (error, NL_BACKEND_ERROR, NL_BACKEND_ERROR_NOMEM);
  g_assert_nonnull (strstr (error->message, "conv1 (Conv2D) forward"));
  g_assert_nonnull (strstr (error->message, "104,857,600 bytes"));
  g_assert_nonnull (strstr (error->message, "fake:0"));
  g_assert_cmpstr (error->message, ==,
                   "out of memory on fake:0: conv1 (Conv2D) forward asked for 104,857,600 bytes "
                   "(100.0 MiB); netloom holds 10.0 MiB there (10.0 MiB in use)");
  /* tried, trimmed (nothing to give back), tried again */
  g_assert_cmpuint (d->alloc_calls, ==, 1 + 2);
  NlDeviceAllocatorStats s = stats_of (allocator);
  g_assert_cmpuint (s.backend_allocs, ==, 1);
  g_assert_cmpuint (s.reserved, ==, 10 * MiB);
  g_assert_cmpuint (s.in_use, ==, 10 * MiB);

  /* the allocator still works after a failure */
  void *q = alloc_ok (allocator, 20 * MiB);
  nl_device_allocator_release (allocator, q);
  nl_device_allocator_release (allocator, live);
  nl_device_allocator_free (allocator);
  fake_destroy (d);

  /* gigabyte figures, cached bytes that trim cannot return (the tail of a
   * segment whose head is in use), and 1 GiB with separators */
  d = fake_new (2 * GiB, TRUE);
  allocator = pool_on (d);
  live = alloc_ok (allocator, 1 * GiB);
  void *tmp = alloc_ok (allocator, 800 * MiB);
  nl_device_allocator_release (allocator, tmp);
  void *part = alloc_ok (allocator, 200 * MiB); /* 600 MiB tail stays cached */
  g_clear_error (&error);
  p = nl_device_allocator_alloc (allocator, 1 * GiB, "fc2 (Dense) backward", &error);
  g_assert_null (p);
  g_assert_error (error, NL_BACKEND_ERROR, NL_BACKEND_ERROR_NOMEM);
  /* held 1824 MiB = 1.78 GiB, in use 1224 MiB = 1.20 GiB */
  g_assert_cmpstr (error->message, ==,
                   "out of memory on fake:0: fc2 (Dense) backward asked for 1,073,741,824 bytes "
                   "(1024.0 MiB); netloom holds 1.8 GiB there (1.2 GiB in use)");
  /* and the cached tail itself is still usable */
  void *tail = alloc_ok (allocator, 600 * MiB);
  g_assert_cmpint (OFF (tail, part), ==, (gssize) (200 * MiB));
  nl_device_allocator_release (allocator, tail);
  nl_device_allocator_release (allocator, part);
  nl_device_allocator_release (allocator, live);

  /* a size that cannot exist is an error, not an overflow */
  g_clear_error (&error);
  p = nl_device_allocator_alloc (allocator, SIZE_MAX, "huge", &error);
  g_assert_null (p);
  g_assert_error (error, NL_BACKEND_ERROR, NL_BACKEND_ERROR_NOMEM);
  nl_device_allocator_free (allocator);
  fake_destroy (d);
}

static void
fill (void *p, size_t n, guint64 tag)
{
  unsigned char *c = p;
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    memcpy (c + i, &tag, 8);
  memcpy (c + i, &tag, n - i);
}

static gboolean
intact (const void *p, size_t n, guint64 tag)
{
  const unsigned char *c = p;
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    if (memcmp (c + i, &tag, 8) != 0)
      return FALSE;
  return memcmp (c + i, &tag, n - i) == 0;
}

static void
test_oom_trim (void)
{
  FakeDevice *d = fake_new (64 * MiB, FALSE);
  NlDeviceAllocator *allocator = pool_on (d);
  /* fill the cache: large segments of 8 x 6 + 4 MiB, four small ones full
   * of 1 MiB blocks, and one small block that stays in use */
  void *blocks[15];
  for (int i = 0; i < 6; i++)
    blocks[i] = alloc_ok (allocator, 8 * MiB);
  blocks[6] = alloc_ok (allocator, 4 * MiB);
  for (int i = 7; i < 15; i++)
    blocks[i] = alloc_ok (allocator, 1 * MiB);
  void *keep = alloc_ok (allocator, 4 * KiB);
  fill (keep, 4 * KiB, 0x0123456789abcdefu);
  for (int i = 0; i < 15; i++)
    nl_device_allocator_release (allocator, blocks[i]);
  NlDeviceAllocatorStats s = stats_of (allocator);
  g_assert_cmpuint (s.reserved, ==, 6 * 8 * MiB + 4 * MiB + 5 * 2 * MiB);
  g_assert_cmpuint (s.in_use, ==, 4 * KiB);
  g_assert_cmpuint (s.backend_allocs, ==, 12);
  g_assert_cmpuint (d->used, ==, 62 * MiB);

  /* 16 MiB: no cached block is that big and the device has 2 MiB left;
   * only after the 11 wholly free segments go back does it fit */
  g_autoptr (GError) error = NULL;
  void *p = nl_device_allocator_alloc (allocator, 16 * MiB, "after trim", &error);
  g_assert_no_error (error);
  g_assert_nonnull (p);
  fill (p, 16 * MiB, 0xfedcba9876543210u);
  g_assert_cmpuint (d->alloc_calls, ==, 12 + 2);
  s = stats_of (allocator);
  g_assert_cmpuint (s.backend_frees, ==, 11);
  g_assert_cmpuint (s.backend_allocs, ==, 13);
  g_assert_cmpuint (s.reserved, ==, 2 * MiB + 16 * MiB);
  g_assert_cmpuint (s.in_use, ==, 16 * MiB + 4 * KiB);
  g_assert_cmpuint (d->used, ==, 18 * MiB);
  g_assert_cmpuint (fake_live (d), ==, 2);
  /* the block in use survived the trim untouched */
  g_assert_true (intact (keep, 4 * KiB, 0x0123456789abcdefu));
  g_assert_true (intact (p, 16 * MiB, 0xfedcba9876543210u));
  nl_device_allocator_release (allocator, p);
  nl_device_allocator_release (allocator, keep);
  nl_device_allocator_free (allocator);
  g_assert_cmpuint (fake_live (d), ==, 0);
  fake_destroy (d);
}

static void
test_stats (void)
{
  FakeDevice *d = fake_new (64 * MiB, TRUE);
  NlDeviceAllocator *allocator = pool_on (d);
  NlDeviceAllocatorStats s = stats_of (allocator);
  g_assert_cmpuint (s.reserved, ==, 0);
  g_assert_cmpuint (s.peak_in_use, ==, 0);

  void *a = alloc_ok (allocator, 1000);          /* 1024 from a 2 MiB segment */
  void *b = alloc_ok (allocator, 3 * MiB);       /* 4 MiB segment, 1 MiB tail kept */
  void *c = alloc_ok (allocator, 0);             /* 512 */
  s = stats_of (allocator);
  g_assert_cmpuint (s.in_use, ==, 1024 + 4 * MiB + 512);
  g_assert_cmpuint (s.reserved, ==, 2 * MiB + 4 * MiB);
  g_assert_cmpuint (s.cached, ==, 2 * MiB - 1024 - 512);
  g_assert_cmpuint (s.peak_in_use, ==, 1024 + 4 * MiB + 512);
  g_assert_cmpuint (s.backend_allocs, ==, 2);

  nl_device_allocator_release (allocator, b);
  void *e = alloc_ok (allocator, 1536 * KiB);    /* 4 MiB block split: 2.5 MiB tail */
  void *f = alloc_ok (allocator, 2 * MiB);       /* takes the tail, 0.5 MiB kept */
  g_assert_true (e == b);
  g_assert_cmpint (OFF (f, e), ==, (gssize) (1536 * KiB));
  s = stats_of (allocator);
  g_assert_cmpuint (s.in_use, ==, 1536 + 1536 * KiB + 2560 * KiB);
  g_assert_cmpuint (s.cached, ==, 2 * MiB - 1536);
  g_assert_cmpuint (s.peak_in_use, ==, 1536 + 4 * MiB);
  g_assert_cmpuint (s.backend_allocs, ==, 2);

  nl_device_allocator_release (allocator, a);
  nl_device_allocator_release (allocator, f);
  s = stats_of (allocator);
  g_assert_cmpuint (s.in_use, ==, 512 + 1536 * KiB);
  g_assert_cmpuint (s.peak_in_use, ==, 1536 + 4 * MiB);

  void *g = alloc_ok (allocator, 9 * MiB);       /* a third segment: 10 MiB */
  s = stats_of (allocator);
  g_assert_cmpuint (s.reserved, ==, 16 * MiB);
  g_assert_cmpuint (s.in_use, ==, 512 + 1536 * KiB + 10 * MiB);
  g_assert_cmpuint (s.peak_in_use, ==, s.in_use);
  size_t peak = s.in_use;

  nl_device_allocator_release (allocator, c);
  nl_device_allocator_release (allocator, e);
  nl_device_allocator_trim (allocator);                      /* the 2 and 4 MiB segments go */
  s = stats_of (allocator);
  g_assert_cmpuint (s.reserved, ==, 10 * MiB);
  g_assert_cmpuint (s.cached, ==, 0);
  g_assert_cmpuint (s.backend_frees, ==, 2);
  g_assert_cmpuint (s.peak_in_use, ==, peak);
  g_assert_cmpuint (s.reserved, ==, d->used);
  nl_device_allocator_release (allocator, g);
  nl_device_allocator_trim (allocator);
  s = stats_of (allocator);
  g_assert_cmpuint (s.reserved, ==, 0);
  g_assert_cmpuint (s.in_use, ==, 0);
  g_assert_cmpuint (s.backend_frees, ==, 3);
  g_assert_cmpuint (s.backend_frees, ==, d->frees);
  g_assert_cmpuint (s.backend_allocs, ==, d->alloc_ok);
  nl_device_allocator_free (allocator);
  fake_destroy (d);
}

/* ---- threads: every live block of every thread is disjoint from all
 * others, checked twice: by an interval set and by the pattern each owner
 * wrote, which a block handed out twice would overwrite. */
typedef struct {
  char *start, *end;
} Interval;

static int
interval_cmp (gconstpointer a, gconstpointer b, gpointer user)
{
  (void) user;
  const Interval *x = a, *y = b;
  if (x->end <= y->start)
    return -1;
  if (y->end <= x->start)
    return 1;
  return 0; /* overlapping: "equal", so a lookup finds any overlap */
}

typedef struct {
  NlDeviceAllocator *allocator;
  GMutex *lock;
  GTree *live;
  int id;
} Worker;

typedef struct {
  char *p;
  size_t n;
  guint64 tag;
} Held;

#define WORKER_OPS 10000
#define WORKER_SLOTS 48

static void
held_release (Worker *w, Held *h)
{
  g_assert_true (intact (h->p, h->n, h->tag));
  Interval key = { h->p, h->p + h->n };
  g_mutex_lock (w->lock);
  g_assert_true (g_tree_remove (w->live, &key));
  g_mutex_unlock (w->lock);
  nl_device_allocator_release (w->allocator, h->p);
}

static gpointer
worker_run (gpointer data)
{
  Worker *w = data;
  GRand *rand = g_rand_new_with_seed (1234 + w->id);
  Held held[WORKER_SLOTS];
  int n_held = 0;
  for (guint64 op = 0; op < WORKER_OPS; op++) {
    if (n_held == WORKER_SLOTS || (n_held > 0 && g_rand_boolean (rand))) {
      int k = g_rand_int_range (rand, 0, n_held);
      held_release (w, &held[k]);
      held[k] = held[--n_held];
      continue;
    }
    int kind = g_rand_int_range (rand, 0, 100);
    size_t n = kind < 90 ? (size_t) g_rand_int_range (rand, 0, 32 * 1024)
             : kind < 98 ? (size_t) g_rand_int_range (rand, 32 * 1024, 1024 * 1024 + 1)
                         : (size_t) g_rand_int_range (rand, 1024 * 1024 + 1, 4 * 1024 * 1024);
    g_autoptr (GError) error = NULL;
    char *p = nl_device_allocator_alloc (w->allocator, n, "worker", &error);
    g_assert_no_error (error);
    Interval *iv = g_new (Interval, 1);
    /* a zero-byte request still owns 512 bytes: check those too */
    size_t span = MAX (n, 1);
    *iv = (Interval) { p, p + span };
    g_mutex_lock (w->lock);
    g_assert_null (g_tree_lookup (w->live, iv));
    g_tree_insert (w->live, iv, iv);
    g_mutex_unlock (w->lock);
    guint64 tag = ((guint64) w->id << 56) ^ (op * G_GUINT64_CONSTANT (0x9E3779B97F4A7C15)) ^ 0x5555;
    fill (p, span, tag);
    held[n_held++] = (Held) { p, span, tag };
  }
  while (n_held > 0)
    held_release (w, &held[--n_held]);
  g_rand_free (rand);
  return NULL;
}

static void
test_threads (void)
{
  FakeDevice *d = fake_new (1 * GiB, FALSE);
  NlDeviceAllocator *allocator = pool_on (d);
  GMutex lock;
  g_mutex_init (&lock);
  GTree *live = g_tree_new_full (interval_cmp, NULL, g_free, NULL);
  Worker workers[4];
  GThread *threads[4];
  for (int i = 0; i < 4; i++) {
    workers[i] = (Worker) { allocator, &lock, live, i };
    threads[i] = g_thread_new ("allocator-worker", worker_run, &workers[i]);
  }
  for (int i = 0; i < 4; i++)
    g_thread_join (threads[i]);
  g_assert_cmpint (g_tree_nnodes (live), ==, 0);
  NlDeviceAllocatorStats s = stats_of (allocator);
  g_assert_cmpuint (s.in_use, ==, 0);
  g_assert_cmpuint (s.peak_in_use, >, 0);
  g_assert_cmpuint (s.reserved, ==, d->used);
  /* everything merged back: trim empties the allocator */
  nl_device_allocator_trim (allocator);
  s = stats_of (allocator);
  g_assert_cmpuint (s.reserved, ==, 0);
  g_assert_cmpuint (fake_live (d), ==, 0);
  g_tree_destroy (live);
  g_mutex_clear (&lock);
  nl_device_allocator_free (allocator);
  fake_destroy (d);
}

static void
test_free (void)
{
  FakeDevice *d = fake_new (256 * MiB, FALSE);
  NlDeviceAllocator *allocator = pool_on (d);
  void *small[6], *large[3];
  for (int i = 0; i < 6; i++)
    small[i] = alloc_ok (allocator, (size_t) (i + 1) * 300 * KiB);
  for (int i = 0; i < 3; i++)
    large[i] = alloc_ok (allocator, (size_t) (i + 2) * 3 * MiB);
  for (int i = 0; i < 6; i += 2)
    nl_device_allocator_release (allocator, small[i]);
  nl_device_allocator_release (allocator, large[1]);
  for (int i = 1; i < 6; i += 2)
    nl_device_allocator_release (allocator, small[i]);
  nl_device_allocator_release (allocator, large[0]);
  nl_device_allocator_release (allocator, large[2]);
  g_assert_cmpuint (fake_live (d), >, 3);
  guint64 allocs = d->alloc_ok;
  nl_device_allocator_free (allocator);
  g_assert_cmpuint (fake_live (d), ==, 0);
  g_assert_cmpuint (d->used, ==, 0);
  g_assert_cmpuint (d->frees, ==, allocs);

  /* blocks still in use are a caller's bug: reported, and freed anyway */
  allocator = pool_on (d);
  alloc_ok (allocator, 100);
  alloc_ok (allocator, 5 * MiB);
  g_test_expect_message ("netloom", G_LOG_LEVEL_WARNING,
                         "*fake:0*2 blocks (6291968 bytes) still in use*");
  nl_device_allocator_free (allocator);
  g_test_assert_expected_messages ();
  g_assert_cmpuint (fake_live (d), ==, 0);
  fake_destroy (d);
}

static void
test_bad_release (void)
{
  FakeDevice *d = fake_new (64 * MiB, TRUE);
  NlDeviceAllocator *allocator = pool_on (d);
  char *p = alloc_ok (allocator, 4096);
  /* inside a block but not its start, and a release twice */
  g_test_expect_message ("netloom", G_LOG_LEVEL_CRITICAL, "*was not handed out*");
  nl_device_allocator_release (allocator, p + 512);
  g_test_assert_expected_messages ();
  nl_device_allocator_release (allocator, p);
  g_test_expect_message ("netloom", G_LOG_LEVEL_CRITICAL, "*was not handed out*");
  nl_device_allocator_release (allocator, p);
  g_test_assert_expected_messages ();
  NlDeviceAllocatorStats s = stats_of (allocator);
  g_assert_cmpuint (s.in_use, ==, 0);
  nl_device_allocator_free (allocator);
  fake_destroy (d);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/allocator/round", test_round);
  g_test_add_func ("/allocator/reuse", test_reuse);
  g_test_add_func ("/allocator/best-fit", test_best_fit);
  g_test_add_func ("/allocator/split-merge", test_split_merge);
  g_test_add_func ("/allocator/oom", test_oom);
  g_test_add_func ("/allocator/oom-trim", test_oom_trim);
  g_test_add_func ("/allocator/stats", test_stats);
  g_test_add_func ("/allocator/threads", test_threads);
  g_test_add_func ("/allocator/free", test_free);
  g_test_add_func ("/allocator/bad-release", test_bad_release);
  return g_test_run ();
}
