/* nl-backend-cpu.c — the CPU as a backend: memory is the process's
 * (64-byte aligned), copies are memcpy, nothing is queued, the engine's
 * kernels are plain C threaded with OpenMP. Its ops' kernels are the table
 * ops/cpu registers (nl_backend_cpu_set_op_kernels). Its collectives are
 * MPI's on host memory (nl-comm.c). */
#include "core/nl-backend-cpu.h"
#include "core/nl-comm.h"
#include "core/nl-threads.h"

#include <stdlib.h>
#include <string.h>

static void *
cpu_alloc (NlBackend *b, size_t nbytes, const char *what, GError **error)
{
  size_t rounded = (nbytes + NL_ALIGN - 1) / NL_ALIGN * NL_ALIGN;
  void *data = aligned_alloc (NL_ALIGN, rounded ? rounded : NL_ALIGN);
  if (!data)
    nl_backend_set_nomem (error, what, nbytes);
  return data;
}

static void
cpu_free (NlBackend *b, void *ptr)
{
  free (ptr);
}

static gboolean
cpu_copy (NlBackend *b, void *dst, const void *src, size_t nbytes, NlCopyKind kind, GError **error)
{
  if (dst != src && nbytes > 0)
    memcpy (dst, src, nbytes);
  return TRUE;
}

static gboolean
cpu_memset0 (NlBackend *b, void *dst, size_t nbytes, GError **error)
{
  memset (dst, 0, nbytes);
  return TRUE;
}

static gboolean
cpu_synchronize (NlBackend *b, GError **error)
{
  return TRUE;
}

static gboolean
cpu_fill (NlBackend *b, float *x, int64_t n, float value, GError **error)
{
  for (int64_t i = 0; i < n; i++)
    x[i] = value;
  return TRUE;
}

static gboolean
cpu_sum_n (NlBackend *b, float *dst, const float *const *src, int n_src, int64_t n, GError **error)
{
  if (n_src == 0)
    return cpu_memset0 (b, dst, n * sizeof (float), error);
  if (dst != src[0])
    memcpy (dst, src[0], n * sizeof (float));
  for (int k = 1; k < n_src; k++)
    {
      const float *s = src[k];
#pragma omp parallel for if (n > 65536)
      for (int64_t i = 0; i < n; i++)
        dst[i] += s[i];
    }
  return TRUE;
}

static gboolean
cpu_allreduce_sum (NlBackend *b, NlComm *comm, float *x, int64_t n, GError **error)
{
  (void) b;
  return nl_comm_allreduce_f32 (comm, x, n, error);
}

static gboolean
cpu_broadcast (NlBackend *b, NlComm *comm, void *x, size_t nbytes, int root, GError **error)
{
  (void) b;
  return nl_comm_broadcast (comm, x, nbytes, root, error);
}

/* Set before main by ops/cpu, read-only after: no lock. */
static struct {
  const void *const *kernels;
  const char *const *names;
  int n;
} cpu_ops;

void
nl_backend_cpu_set_op_kernels (const void *const *kernels, const char *const *names, int n)
{
  cpu_ops.kernels = kernels;
  cpu_ops.names = names;
  cpu_ops.n = n;
}

static const void *
cpu_op_kernels (NlBackend *b, int op_id, const char *op_name)
{
  (void) b;
  if (op_id < 0 || op_id >= cpu_ops.n || g_strcmp0 (cpu_ops.names[op_id], op_name) != 0)
    return NULL;
  return cpu_ops.kernels[op_id];
}

static const NlBackendInterface cpu_iface = {
  .name = "cpu",
  .host_visible = TRUE,
  .in_order = FALSE,
  .alloc = cpu_alloc,
  .free = cpu_free,
  .copy = cpu_copy,
  .memset0 = cpu_memset0,
  .synchronize = cpu_synchronize,
  .fill = cpu_fill,
  .sum_n = cpu_sum_n,
  .sum_squares = nl_backend_cpu_sum_squares,
  .allreduce_sum = cpu_allreduce_sum,
  .broadcast = cpu_broadcast,
  .optim_update = nl_backend_cpu_optim_update,
  .op_kernels = cpu_op_kernels,
};

NlBackend *
nl_backend_cpu (void)
{
  static NlBackend cpu = { &cpu_iface, { NL_DEVICE_CPU, 0 }, NULL };
  return &cpu;
}
