/* nl-cuda-nccl.c — NCCL in the CUDA module: collectives between the GPUs
 * of a data-parallel job, device buffer to device buffer, queued on the
 * context's stream (nl-cuda.h). A module built without NCCL answers
 * "unavailable", and the backend then goes through host memory and MPI. */
#include "core/cuda/nl-cuda.h"

#include <string.h>

#ifdef NL_HAVE_NCCL
#include <nccl.h>

static gboolean
nccl_check (ncclResult_t r, const char *what, GError **error)
{
  if (r == ncclSuccess || r == ncclInProgress)
    return TRUE;
  g_set_error (error, NL_CUDA_ERROR, NL_CUDA_ERROR_FAILED, "%s failed: %s", what, ncclGetErrorString (r));
  return FALSE;
}

gboolean
nl_nccl_unique_id (void *id, GError **error)
{
  G_STATIC_ASSERT (sizeof (ncclUniqueId) == NL_NCCL_ID_BYTES);
  return nccl_check (ncclGetUniqueId ((ncclUniqueId *) id), "ncclGetUniqueId", error);
}

void *
nl_nccl_comm_new (NlCudaCtx *c, int size, int rank, const void *id, GError **error)
{
  ncclComm_t comm = NULL;
  ncclUniqueId uid;
  memcpy (&uid, id, sizeof uid);
  if (!nl_cuda_ctx_enter (c, error) || !nccl_check (ncclCommInitRank (&comm, size, uid, rank), "ncclCommInitRank", error))
    return NULL;
  return comm;
}

void
nl_nccl_comm_free (void *comm)
{
  if (comm)
    ncclCommDestroy ((ncclComm_t) comm);
}

gboolean
nl_nccl_allreduce_sum (NlCudaCtx *c, void *comm, float *x, int64_t n, GError **error)
{
  return nl_cuda_ctx_enter (c, error)
         && nccl_check (ncclAllReduce (x, x, (size_t) n, ncclFloat32, ncclSum, (ncclComm_t) comm,
                                       (cudaStream_t) nl_cuda_ctx_stream (c)), "ncclAllReduce", error);
}

gboolean
nl_nccl_broadcast (NlCudaCtx *c, void *comm, void *x, size_t nbytes, int root, GError **error)
{
  return nl_cuda_ctx_enter (c, error)
         && nccl_check (ncclBroadcast (x, x, nbytes, ncclUint8, root, (ncclComm_t) comm,
                                       (cudaStream_t) nl_cuda_ctx_stream (c)), "ncclBroadcast", error);
}

#else

static gboolean
no_nccl (GError **error)
{
  g_set_error_literal (error, NL_CUDA_ERROR, NL_CUDA_ERROR_UNAVAILABLE, "the CUDA backend was built without NCCL");
  return FALSE;
}

gboolean nl_nccl_unique_id (void *id, GError **error) { (void) id; return no_nccl (error); }
void *nl_nccl_comm_new (NlCudaCtx *c, int size, int rank, const void *id, GError **error)
{ (void) c, (void) size, (void) rank, (void) id; no_nccl (error); return NULL; }
void nl_nccl_comm_free (void *comm) { (void) comm; }
gboolean nl_nccl_allreduce_sum (NlCudaCtx *c, void *comm, float *x, int64_t n, GError **error)
{ (void) c, (void) comm, (void) x, (void) n; return no_nccl (error); }
gboolean nl_nccl_broadcast (NlCudaCtx *c, void *comm, void *x, size_t nbytes, int root, GError **error)
{ (void) c, (void) comm, (void) x, (void) nbytes, (void) root; return no_nccl (error); }

#endif
