/* test-backend.c — the device layer's interface (core/nl-backend.h) as the
 * engine uses it, on the CPU backend: memory, copies, the engine's kernels
 * against plain loops, the fused optimizer update against the tensor API
 * (and a hand-computed Adam step), collectives over a group of one, and the
 * errors for what a backend cannot do or a device that is not here; the
 * registry of backends (core/nl-backend-reg.h) and the device names, list
 * and checks it drives. The CUDA instance runs the same calls in
 * test-cuda-runtime where a GPU is. */
#include <math.h>
#include <string.h>

#include "core/nl-backend-reg.h"
#include "core/nl-backend.h"
#include "core/nl-comm.h"
#include "engine/train/nl-optim.h"
#include "nl-test-util.h"

static void
test_cpu_memory (void)
{
  NlBackend *b = nl_backend_cpu ();
  g_autoptr (GError) error = NULL;
  float *x, *y;

  g_assert_true (nl_backend_get (NL_DEVICE_CPU_0, NULL) == b);
  g_assert_cmpstr (b->iface->name, ==, "cpu");
  g_assert_true (b->iface->host_visible);
  g_assert_false (b->iface->in_order);
  /* the table ops/cpu/nl-cpu-ops.c registers, asked by id and list name */
  g_assert_nonnull (b->iface->op_kernels);
  g_assert_nonnull (nl_backend_op_kernels (b, 0, "input"));
  g_assert_null (nl_backend_op_kernels (b, 0, "dense"));

  x = nl_backend_alloc (b, 1000 * sizeof (float), "x", &error);
  y = nl_backend_alloc (b, 1000 * sizeof (float), "y", &error);
  g_assert_no_error (error);
  g_assert_cmpuint ((guintptr) x % NL_ALIGN, ==, 0);
  for (int i = 0; i < 1000; i++)
    x[i] = (float) i;
  g_assert_true (nl_backend_memset0 (b, y, 1000 * sizeof (float), &error));
  g_assert_cmpfloat (y[999], ==, 0);
  g_assert_true (nl_backend_copy (b, y, x, 1000 * sizeof (float), NL_COPY_HOST_TO_DEVICE, &error));
  g_assert_cmpmem (x, 1000 * sizeof (float), y, 1000 * sizeof (float));
  g_assert_true (nl_backend_fill (b, y, 1000, 2.5f, &error));
  g_assert_cmpfloat (y[0], ==, 2.5f);
  g_assert_cmpfloat (y[999], ==, 2.5f);
  g_assert_true (nl_backend_synchronize (b, &error));
  g_assert_no_error (error);
  b->iface->free (b, x);
  b->iface->free (b, y);
}

/* Under AddressSanitizer an impossible allocation must fail as it does
 * without it (returning NULL), not abort the test: what the asker sees is
 * what is tested. Read by ASan builds only. */
const char *__asan_default_options (void);
const char *
__asan_default_options (void)
{
  return "allocator_may_return_null=1";
}

static void
test_cpu_out_of_memory (void)
{
  g_autoptr (GError) error = NULL;
  /* more than any address space: the error names what asked and the bytes */
  void *p = nl_backend_alloc (nl_backend_cpu (), (size_t) 1 << 62, "fc1.weight (Dense)", &error);
  g_assert_null (p);
  g_assert_error (error, NL_BACKEND_ERROR, NL_BACKEND_ERROR_NOMEM);
  g_assert_cmpstr (error->message, ==,
                   "out of memory: fc1.weight (Dense) asked for 4,611,686,018,427,387,904 bytes (4398046511104.0 MiB)");
}

/* sum_n adds in source order, dst may be the first source */
static void
test_cpu_sum_n (void)
{
  NlBackend *b = nl_backend_cpu ();
  enum { N = 70000 }; /* over the threading grain */
  g_autofree float *a = g_new (float, N), *c = g_new (float, N), *d = g_new (float, N), *dst = g_new (float, N);
  const float *src[3] = { a, c, d };
  g_autoptr (GError) error = NULL;

  for (int i = 0; i < N; i++)
    {
      a[i] = 0.1f * (float) (i % 97);
      c[i] = 1e7f;
      d[i] = -1e7f;
    }
  g_assert_true (nl_backend_sum_n (b, dst, src, 3, N, &error));
  for (int i = 0; i < N; i++)
    g_assert_cmpfloat (dst[i], ==, (a[i] + c[i]) + d[i]); /* in order: the small part is rounded away */
  g_assert_true (nl_backend_sum_n (b, a, src, 2, N, &error));
  g_assert_cmpfloat (a[5], ==, 0.5f + 1e7f);
  g_assert_no_error (error);
}

/* the sum of squares over several buffers, in double, whatever the thread
 * count; a NaN anywhere makes it NaN */
static void
test_cpu_sum_squares (void)
{
  NlBackend *b = nl_backend_cpu ();
  enum { N1 = 3, N2 = 50000 };
  g_autofree float *x1 = g_new (float, N1), *x2 = g_new (float, N2);
  const float *x[3] = { x1, NULL, x2 };
  int64_t n[3] = { N1, 0, N2 };
  double want = 0, got = 0, again = 0;
  g_autoptr (GError) error = NULL;
  int threads = nl_threads_get ();

  for (int i = 0; i < N1; i++)
    x1[i] = (float) (i + 1);
  for (int i = 0; i < N2; i++)
    x2[i] = (float) ((i % 13) - 6) * 0.25f;
  for (int i = 0; i < N1; i++)
    want += (double) x1[i] * x1[i];
  for (int i = 0; i < N2; i++)
    want += (double) x2[i] * x2[i];
  g_assert_true (nl_backend_sum_squares (b, x, n, 3, &got, &error));
  g_assert_cmpfloat_with_epsilon (got, want, 1e-9 * want);
  nl_threads_set (1);
  g_assert_true (nl_backend_sum_squares (b, x, n, 3, &again, &error));
  nl_threads_set (threads);
  g_assert_cmpmem (&got, sizeof got, &again, sizeof again);
  x2[N2 - 1] = NAN;
  g_assert_true (nl_backend_sum_squares (b, x, n, 3, &got, &error));
  g_assert_true (isnan (got));
  g_assert_no_error (error);
}

/* The tensor API (engine/train/nl-optim.c, which test-optim checks against
 * hand-computed updates of every kind) hands its tensors to the backend:
 * raw pointers in the state order of nl_optim_n_states give the same bits,
 * for every kind and variant; and one Adam step is what the formula gives. */
static void
test_cpu_optim_update (void)
{
  NlBackend *b = nl_backend_cpu ();
  enum { N = 2500 };
  NlShape s = nl_shape_of (1, (int64_t) N);
  g_autoptr (GError) error = NULL;

  for (int kind = 0; kind < NL_OPTIM_COUNT; kind++)
    for (int variant = 0; variant < 2; variant++)
      {
        NlOptimConfig cfg;
        g_autoptr (NlTensor) w1 = nl_tensor_zeros (NL_DTYPE_F32, &s), w2 = nl_tensor_zeros (NL_DTYPE_F32, &s);
        g_autoptr (NlTensor) g = nl_tensor_zeros (NL_DTYPE_F32, &s);
        NlTensor *st1[4] = { NULL }, *st2[4] = { NULL };
        float *raw[4] = { NULL };
        int n_states;

        nl_optim_config_init (&cfg, (NlOptimKind) kind);
        if (variant)
          {
            cfg.momentum = 0.8f;
            cfg.centered = TRUE;
            cfg.wd = 1e-3f;
            cfg.clip_gradient = 0.3f;
          }
        n_states = nl_optim_n_states (&cfg);
        nl_test_fill_uniform (w1, -1, 1, 11);
        nl_test_fill_uniform (g, -1, 1, 12);
        memcpy (nl_tensor_f32 (w2), nl_tensor_f32 (w1), N * sizeof (float));
        for (int k = 0; k < n_states; k++)
          {
            st1[k] = nl_tensor_zeros (NL_DTYPE_F32, &s);
            st2[k] = nl_tensor_zeros (NL_DTYPE_F32, &s);
            raw[k] = nl_tensor_f32 (st2[k]);
          }
        for (int t = 1; t <= 3; t++)
          {
            nl_optim_update (&cfg, 0.01f, t, 0.9f, w1, g, st1);
            g_assert_true (nl_backend_optim_update (b, &cfg, 0.01f, t, 0.9f, nl_tensor_f32 (w2), nl_tensor_f32 (g),
                                                    raw, N, &error));
          }
        g_assert_cmpmem (nl_tensor_f32 (w1), N * sizeof (float), nl_tensor_f32 (w2), N * sizeof (float));
        for (int k = 0; k < n_states; k++)
          {
            g_assert_cmpmem (nl_tensor_f32 (st1[k]), N * sizeof (float), raw[k], N * sizeof (float));
            nl_tensor_unref (st1[k]);
            nl_tensor_unref (st2[k]);
          }
      }

  {
    /* Adam, t = 1: m = 0.1 g, v = 0.001 g^2, w -= lr m / (1 - b1) / (sqrt (v / (1 - b2)) + eps) */
    NlOptimConfig cfg;
    float w = 0.5f, grad = 0.2f, m = 0, v = 0;
    float *state[2] = { &m, &v };
    double want = 0.5 - 0.001 * (0.1 * 0.2 / 0.1) / (sqrt (0.001 * 0.04 / 0.001) + 1e-8);
    nl_optim_config_init (&cfg, NL_OPTIM_ADAM);
    g_assert_true (nl_backend_optim_update (b, &cfg, 0.001f, 1, 1.0f, &w, &grad, state, 1, &error));
    g_assert_cmpfloat_with_epsilon (w, want, 1e-6);
    g_assert_cmpfloat_with_epsilon (m, 0.02, 1e-8);
    g_assert_cmpfloat_with_epsilon (v, 0.001 * 0.04, 1e-4 * 0.001 * 0.04); /* 1 - 0.999f is not 0.001 */
  }
  g_assert_no_error (error);
}

/* Collectives: a group of one (or none) needs no transport; a larger group
 * without one is an error saying so, not a silent no-op (the CPU's
 * collectives are MPI's: tests/test-mpi.sh runs them under mpirun). */
static void
test_collectives (void)
{
  NlBackend *b = nl_backend_cpu ();
  NlComm one = { .size = 1, .rank = 0 }, two = { .size = 2, .rank = 1 };
  float x[4] = { 1, 2, 3, 4 };
  g_autoptr (GError) error = NULL;

  g_assert_true (nl_backend_allreduce_sum (b, NULL, x, 4, &error));
  g_assert_true (nl_backend_allreduce_sum (b, &one, x, 4, &error));
  g_assert_true (nl_backend_broadcast (b, &one, x, sizeof x, 0, &error));
  g_assert_no_error (error);
  g_assert_cmpfloat (x[3], ==, 4);
  g_assert_false (nl_backend_allreduce_sum (b, &two, x, 4, &error));
  g_assert_error (error, NL_COMM_ERROR, NL_COMM_ERROR_UNAVAILABLE);
  g_assert_nonnull (strstr (error->message, "without a transport"));
  g_clear_error (&error);
  g_assert_false (nl_backend_broadcast (b, &two, x, sizeof x, 0, &error));
  g_assert_error (error, NL_COMM_ERROR, NL_COMM_ERROR_UNAVAILABLE);
  g_clear_error (&error);
  /* a backend without collectives says so */
  {
    NlBackendInterface bare = *b->iface;
    NlBackend other = *b;
    bare.allreduce_sum = NULL;
    bare.name = "bare";
    other.iface = &bare;
    g_assert_false (nl_backend_allreduce_sum (&other, &two, x, 4, &error));
    g_assert_error (error, NL_BACKEND_ERROR, NL_BACKEND_ERROR_UNSUPPORTED);
    g_assert_nonnull (strstr (error->message, "bare"));
  }
}

/* A GPU that is not here: one error naming the device and why. */
static void
test_missing_device (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *reason = NULL;
  NlBackend *b = nl_backend_get ((NlDevice) { NL_DEVICE_CUDA, 7 }, &error);
  GPtrArray *list = nl_device_list (&reason);
  int n_gpus = (int) list->len - 1;

  g_ptr_array_unref (list);
  if (n_gpus > 7)
    {
      g_test_skip ("this machine has a cuda:7");
      return;
    }
  g_assert_null (b);
  g_assert_error (error, NL_DEVICE_ERROR, NL_DEVICE_ERROR_UNAVAILABLE);
  g_assert_true (g_str_has_prefix (error->message, "cuda:7: "));
}

/* Storage gives memory back to the backend that gave it; pinned memory on
 * a backend without any is ordinary memory. */
static void
test_storage_owner (void)
{
  NlStorage *s = nl_storage_new_pinned (nl_backend_cpu (), 100);
  g_assert_nonnull (s);
  g_assert_false (s->pinned);
  g_assert_true (s->owner == nl_backend_cpu ());
  g_assert_cmpint (s->device.type, ==, NL_DEVICE_CPU);
  nl_storage_unref (s);
  s = nl_storage_new_device (64, NL_DEVICE_CPU_0, "x", NULL);
  g_assert_nonnull (s);
  g_assert_true (s->owner == nl_backend_cpu ());
  nl_storage_unref (s);
}

/* One row per device type, in its order, the host's first and only it;
 * every required member there; found by device and by name. */
static void
test_registry_rows (void)
{
  g_assert_cmpuint (nl_backend_reg_count (), ==, NL_DEVICE_CUDA + 1);
  for (guint i = 0; i < nl_backend_reg_count (); i++)
    {
      const NlBackendReg *reg = nl_backend_reg_get (i);
      NlDevice d = { (NlDeviceType) i, 0 };
      g_assert_nonnull (reg->name);
      g_assert_nonnull (reg->label);
      g_assert_true (reg->device_count && reg->device_info && reg->device_summary && reg->device_facts && reg->get
                     && reg->supports_op);
      g_assert_true (reg->host == (i == 0));
      g_assert_true (nl_backend_reg_of (d) == reg);
      g_assert_true (nl_backend_reg_find (reg->name) == reg);
      g_assert_cmpstr (nl_device_kind (d), ==, reg->name);
      g_assert_true (nl_device_is_host (d) == reg->host);
    }
  g_assert_cmpstr (nl_backend_reg_get (NL_DEVICE_CPU)->name, ==, "cpu");
  g_assert_cmpstr (nl_backend_reg_get (NL_DEVICE_CUDA)->name, ==, "cuda");
  g_assert_null (nl_backend_reg_find ("tpu"));
  g_assert_null (nl_backend_reg_find (NULL));
  g_assert_null (nl_backend_reg_of ((NlDevice) { (NlDeviceType) 99, 0 }));
  g_assert_null (nl_device_kind ((NlDevice) { (NlDeviceType) 99, 0 }));
  g_assert_false (nl_device_is_host ((NlDevice) { (NlDeviceType) 99, 0 }));
}

static void
assert_parses (const char *text, NlDeviceType type, int index)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *back = NULL;
  NlDevice d = { (NlDeviceType) 99, -1 };
  g_assert_true (nl_device_parse (text, &d, &error));
  g_assert_no_error (error);
  g_assert_cmpint (d.type, ==, type);
  g_assert_cmpint (d.index, ==, index);
  back = nl_device_to_string (d);
  /* a bare indexed name is :0 */
  g_assert_true (!strcmp (back, text) || (g_str_has_suffix (back, ":0") && !strncmp (back, text, strlen (text))));
}

/* Ids through the rows: "cpu"; "cuda" = "cuda:0", "cuda:N"; anything else
 * one error listing what is known. */
static void
test_registry_names (void)
{
  static const char *const bad[] = { "tpu", "", "cpu:0", "cuda:", "cuda:x", "cuda:-1", "CUDA", "cuda0", "cpux" };
  assert_parses ("cpu", NL_DEVICE_CPU, 0);
  assert_parses ("cuda", NL_DEVICE_CUDA, 0);
  assert_parses ("cuda:0", NL_DEVICE_CUDA, 0);
  assert_parses ("cuda:13", NL_DEVICE_CUDA, 13);
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr (GError) error = NULL;
      g_autofree char *want = g_strdup_printf ("unknown device '%s' (use cpu, cuda or cuda:N)", bad[i]);
      g_assert_false (nl_device_parse (bad[i], NULL, &error));
      g_assert_error (error, NL_DEVICE_ERROR, NL_DEVICE_ERROR_PARSE);
      g_assert_cmpstr (error->message, ==, want);
    }
  {
    g_autoptr (GError) error = NULL;
    g_assert_false (nl_device_parse (NULL, NULL, &error));
    g_assert_cmpstr (error->message, ==, "unknown device '' (use cpu, cuda or cuda:N)");
  }
}

/* The list: the CPU first, every entry named as printed and described by
 * its row; a reason exactly when only the CPU is there, and the checks of
 * a missing GPU give that same reason. */
static void
test_registry_list (void)
{
  g_autofree char *reason = NULL;
  g_autoptr (GPtrArray) list = nl_device_list (&reason);
  const NlDeviceInfo *cpu = g_ptr_array_index (list, 0);
  g_autofree char *cpu_summary = nl_backend_reg_of (cpu->device)->device_summary (cpu);
  g_autofree char *want = g_strdup_printf ("%d core%s", cpu->cores, cpu->cores == 1 ? "" : "s");

  g_assert_cmpuint (list->len, >=, 1);
  g_assert_cmpstr (cpu->id, ==, "cpu");
  g_assert_cmpstr (cpu_summary, ==, want);
  g_assert_true ((reason == NULL) == (list->len > 1));
  for (guint i = 0; i < list->len; i++)
    {
      const NlDeviceInfo *d = g_ptr_array_index (list, i);
      const NlBackendReg *reg = nl_backend_reg_of (d->device);
      g_autofree char *id = nl_device_to_string (d->device);
      g_autoptr (GVariant) facts = g_variant_ref_sink (reg->device_facts (d));
      g_assert_cmpstr (d->id, ==, id);
      g_assert_true (g_variant_is_of_type (facts, G_VARIANT_TYPE_VARDICT));
      g_assert_cmpuint (g_variant_n_children (facts), >, 0);
      g_assert_true (nl_device_is_host (d->device) == (i == 0));
      g_assert_true (nl_device_check (d->device, NULL));
    }
  if (list->len == 1)
    {
      g_autoptr (GError) error = NULL;
      g_autofree char *msg = g_strdup_printf ("cuda:0: no CUDA device: %s", reason);
      g_assert_false (nl_device_check ((NlDevice) { NL_DEVICE_CUDA, 0 }, &error));
      g_assert_error (error, NL_DEVICE_ERROR, NL_DEVICE_ERROR_UNAVAILABLE);
      g_assert_cmpstr (error->message, ==, msg);
    }
}

/* Each local rank its own device of the kind, round robin; the CPU and a
 * kind with no device here stay as they are; an unknown type fails. */
static void
test_registry_for_rank (void)
{
  g_autoptr (GPtrArray) list = nl_device_list (NULL);
  int gpus = (int) list->len - 1;
  g_autoptr (GError) error = NULL;

  for (int rank = 0; rank < 5; rank++)
    {
      NlDevice cpu = nl_device_for_rank (NL_DEVICE_CPU_0, rank);
      NlDevice gpu = nl_device_for_rank ((NlDevice) { NL_DEVICE_CUDA, 0 }, rank);
      g_assert_cmpint (cpu.type, ==, NL_DEVICE_CPU);
      g_assert_cmpint (cpu.index, ==, 0);
      g_assert_cmpint (gpu.type, ==, NL_DEVICE_CUDA);
      g_assert_cmpint (gpu.index, ==, gpus > 0 ? rank % gpus : 0);
    }
  g_assert_true (nl_backend_get (NL_DEVICE_CPU_0, NULL) == nl_backend_cpu ());
  g_assert_null (nl_backend_get ((NlDevice) { (NlDeviceType) 99, 0 }, &error));
  g_assert_error (error, NL_BACKEND_ERROR, NL_BACKEND_ERROR_UNAVAILABLE);
  g_clear_error (&error);
  g_assert_false (nl_device_check ((NlDevice) { (NlDeviceType) 99, 0 }, &error));
  g_assert_error (error, NL_DEVICE_ERROR, NL_DEVICE_ERROR_UNAVAILABLE);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/backend/cpu/memory", test_cpu_memory);
  g_test_add_func ("/backend/cpu/out-of-memory", test_cpu_out_of_memory);
  g_test_add_func ("/backend/cpu/sum-n", test_cpu_sum_n);
  g_test_add_func ("/backend/cpu/sum-squares", test_cpu_sum_squares);
  g_test_add_func ("/backend/cpu/optim-update", test_cpu_optim_update);
  g_test_add_func ("/backend/collectives", test_collectives);
  g_test_add_func ("/backend/missing-device", test_missing_device);
  g_test_add_func ("/backend/storage-owner", test_storage_owner);
  g_test_add_func ("/backend/registry/rows", test_registry_rows);
  g_test_add_func ("/backend/registry/names", test_registry_names);
  g_test_add_func ("/backend/registry/list", test_registry_list);
  g_test_add_func ("/backend/registry/for-rank", test_registry_for_rank);
  return g_test_run ();
}
