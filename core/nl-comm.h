/* nl-comm.h — a group of processes that train together (data
 * parallelism). The backends' collectives (nl-backend.h) run over it: MPI
 * moves host buffers, NCCL GPU buffers. NULL stands for a group of one,
 * where every collective is a no-op. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

struct NlComm {
  int size;              /* processes in the group */
  int rank;              /* this one's, 0 .. size - 1 */
  void *host_transport;  /* what moves host buffers (an MPI communicator), or NULL */
  void *device_transport;/* what moves device buffers (a NCCL communicator), or NULL */
};

G_END_DECLS
