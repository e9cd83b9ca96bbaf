/* nl-comm.h — a group of processes that train together (data
 * parallelism). The backends' collectives (nl-backend.h) run over it: MPI
 * moves host buffers, NCCL GPU buffers. NULL stands for a group of one,
 * where every collective is a no-op.
 *
 * The world: a process started by mpirun (Open MPI's environment says so)
 * joins the job's group with nl_comm_world_init (); every other process,
 * and a build without MPI, is a group of one. Host collectives here are
 * serialised by one lock (MPI_THREAD_SERIALIZED) and each has a deadline:
 * a collective that gets no answer for nl_comm_timeout () seconds (a peer
 * died or hangs) prints one message naming this rank and aborts the job,
 * so no process waits forever. */
#pragma once

#include <glib.h>
#include <stdint.h>

G_BEGIN_DECLS

struct NlComm {
  int size;              /* processes in the group */
  int rank;              /* this one's, 0 .. size - 1 */
  int local_rank;        /* among the group's processes on this host */
  int local_size;
  void *host_transport;  /* what moves host buffers (an MPI communicator), or NULL */
  void *device_transport;/* what moves device buffers (a NCCL communicator), or NULL */
  int device_transport_state;            /* 0: not tried yet, 1: set up, -1: none (host memory and MPI) */
  void (*device_transport_free) (void *); /* called by nl_comm_world_finalize */
  char *hosts;           /* where the group runs: "node1 x2, node2 x2" */
};
typedef struct NlComm NlComm;

#define NL_COMM_ERROR (nl_comm_error_quark ())
GQuark nl_comm_error_quark (void);
typedef enum {
  NL_COMM_ERROR_UNAVAILABLE, /* started under mpirun, built without MPI */
  NL_COMM_ERROR_FAILED,      /* an MPI call failed */
  NL_COMM_ERROR_MISMATCH,    /* the processes do not run the same job */
} NlCommError;

/* Whether this binary was built with MPI. */
gboolean nl_comm_compiled (void);
/* Whether the environment says mpirun started this process. */
gboolean nl_comm_launched (void);
/* Joins the job's group when started by mpirun (more than one process);
 * FALSE with the reason when that cannot be (a build without MPI under
 * mpirun). A process not under mpirun stays a group of one: TRUE. */
gboolean nl_comm_world_init (GError **error);
/* The job's group, or NULL for a group of one. */
NlComm *nl_comm_world (void);
/* Leaves the group (MPI_Finalize); harmless when never joined. */
void nl_comm_world_finalize (void);
/* Ends every process of the job with status code (MPI_Abort), after this
 * one printed why; returns only without a group. */
void nl_comm_abort (NlComm *comm, int code);
/* Seconds a collective may wait for the other processes
 * ($NETLOOM_COLLECTIVE_TIMEOUT, default 20). */
double nl_comm_timeout (void);

/* Host collectives (in place; every rank calls them in the same order).
 * No-ops for a group of one. */
gboolean nl_comm_allreduce_f32 (NlComm *comm, float *x, int64_t n, GError **error);
gboolean nl_comm_allreduce_f64 (NlComm *comm, double *x, int64_t n, GError **error);
gboolean nl_comm_allreduce_max_f64 (NlComm *comm, double *x, int64_t n, GError **error);
gboolean nl_comm_broadcast (NlComm *comm, void *x, size_t nbytes, int root, GError **error);
/* Root's bytes to every rank: *data (length *len) in, on other ranks a new
 * buffer (g_free) out. */
gboolean nl_comm_broadcast_bytes (NlComm *comm, char **data, size_t *len, int root, GError **error);
/* Every rank's value of x in out[size] (each rank's, by rank). */
gboolean nl_comm_allgather_u64 (NlComm *comm, guint64 x, guint64 *out, GError **error);
/* "host1 x2, host2 x2": where the group runs (every rank gets it). */
char *nl_comm_describe_hosts (NlComm *comm, GError **error);

G_END_DECLS
