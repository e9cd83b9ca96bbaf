/* nl-comm.c — the job's group of processes over Open MPI (nl-comm.h). */
#include "core/nl-comm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef NL_HAVE_MPI
#include <mpi.h>
#endif

G_DEFINE_QUARK (nl-comm-error-quark, nl_comm_error)

gboolean
nl_comm_compiled (void)
{
#ifdef NL_HAVE_MPI
  return TRUE;
#else
  return FALSE;
#endif
}

gboolean
nl_comm_launched (void)
{
  /* Open MPI's launchers (mpirun, prterun) set both */
  return g_getenv ("OMPI_COMM_WORLD_SIZE") != NULL || g_getenv ("PMIX_RANK") != NULL;
}

double
nl_comm_timeout (void)
{
  const char *env = g_getenv ("NETLOOM_COLLECTIVE_TIMEOUT");
  double t = env ? g_ascii_strtod (env, NULL) : 0;
  return t > 0 ? t : 20.0;
}

static NlComm *world;

NlComm *
nl_comm_world (void)
{
  return world;
}

/* 0: a group of one (nothing to do), 1: go, -1: a group without a
 * transport (error set) */
static int
group_check (NlComm *comm, GError **error)
{
  if (!comm || comm->size <= 1)
    return 0;
  if (!comm->host_transport)
    {
      g_set_error (error, NL_COMM_ERROR, NL_COMM_ERROR_UNAVAILABLE,
                   "a group of %d processes without a transport (this netloom %s MPI)", comm->size,
                   nl_comm_compiled () ? "has no MPI job here, though it was built with" : "was built without");
      return -1;
    }
  return 1;
}

#ifdef NL_HAVE_MPI

static GMutex mpi_lock;          /* MPI_THREAD_SERIALIZED: one call at a time */
static gint64 waiting_since;     /* monotonic µs the running collective began, 0: none */
static const char *waiting_what; /* its name, for the message */
static GThread *watchdog;
static volatile gint watchdog_stop;

/* A collective that outlives the timeout means a peer is gone (or hangs):
 * say so once and end this process, which makes mpirun end the others.
 * _exit, not MPI_Abort: another thread is inside MPI. */
static gpointer
watch (gpointer data)
{
  double limit = nl_comm_timeout ();
  gint64 last = g_get_monotonic_time ();
  (void) data;
  while (!g_atomic_int_get (&watchdog_stop))
    {
      gint64 now = g_get_monotonic_time (), since = __atomic_load_n (&waiting_since, __ATOMIC_ACQUIRE);
      /* A tick seconds late: the process was stopped (a job paused with
       * SIGTSTP, every rank alike) or the machine slept; that time was no
       * peer's silence, so the running collective's clock starts again. */
      if (now - last > 2 * G_USEC_PER_SEC && since > 0)
        __atomic_compare_exchange_n (&waiting_since, &since, now, FALSE, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
      last = now;
      since = __atomic_load_n (&waiting_since, __ATOMIC_ACQUIRE);
      if (since > 0 && (now - since) / 1e6 > limit)
        {
          fprintf (stderr, "netloom: rank %d on %s: no answer from the other processes for %.0f s in %s "
                   "(one of them died or hangs); stopping this process\n", world ? world->rank : -1,
                   g_get_host_name (), limit, waiting_what ? waiting_what : "a collective");
          fflush (stderr);
          _exit (3);
        }
      g_usleep (200000);
    }
  return NULL;
}

static void
collective_begin (const char *what)
{
  g_mutex_lock (&mpi_lock);
  waiting_what = what;
  __atomic_store_n (&waiting_since, g_get_monotonic_time (), __ATOMIC_RELEASE);
}

static gboolean
collective_end (int rc, const char *what, GError **error)
{
  __atomic_store_n (&waiting_since, 0, __ATOMIC_RELEASE);
  g_mutex_unlock (&mpi_lock);
  if (rc != MPI_SUCCESS)
    {
      char text[MPI_MAX_ERROR_STRING] = "";
      int len = 0;
      MPI_Error_string (rc, text, &len);
      g_set_error (error, NL_COMM_ERROR, NL_COMM_ERROR_FAILED, "MPI %s failed on rank %d: %s", what,
                   world ? world->rank : -1, text);
      return FALSE;
    }
  return TRUE;
}

gboolean
nl_comm_world_init (GError **error)
{
  int provided = 0, size = 1, rank = 0;
  MPI_Comm local;

  if (world || !nl_comm_launched ())
    return TRUE;
  if (MPI_Init_thread (NULL, NULL, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS)
    {
      g_set_error (error, NL_COMM_ERROR, NL_COMM_ERROR_FAILED, "MPI could not start (MPI_Init_thread failed)");
      return FALSE;
    }
  /* calls come from the trainer and the reducer's thread, one at a time
   * (serialised here): an MPI without that level could corrupt itself */
  if (provided < MPI_THREAD_SERIALIZED)
    {
      g_set_error (error, NL_COMM_ERROR, NL_COMM_ERROR_FAILED,
                   "this MPI library cannot be called from more than one thread (thread level %d, "
                   "netloom needs MPI_THREAD_SERIALIZED)", provided);
      MPI_Finalize ();
      return FALSE;
    }
  /* errors come back as codes: one message, not MPI's default abort */
  MPI_Comm_set_errhandler (MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_size (MPI_COMM_WORLD, &size);
  MPI_Comm_rank (MPI_COMM_WORLD, &rank);
  if (size <= 1)
    return TRUE; /* mpirun -np 1: a group of one, finalized at exit */
  world = g_new0 (NlComm, 1);
  world->size = size;
  world->rank = rank;
  world->host_transport = (void *) MPI_COMM_WORLD;
  MPI_Comm_split_type (MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &local);
  MPI_Comm_rank (local, &world->local_rank);
  MPI_Comm_size (local, &world->local_size);
  MPI_Comm_free (&local);
  watchdog = g_thread_new ("nl-comm-watchdog", watch, NULL);
  world->hosts = nl_comm_describe_hosts (world, error);
  return world->hosts != NULL;
}

void
nl_comm_world_finalize (void)
{
  int inited = 0, finalized = 0;
  if (watchdog)
    {
      g_atomic_int_set (&watchdog_stop, 1);
      g_thread_join (watchdog);
      watchdog = NULL;
    }
  if (world && world->device_transport && world->device_transport_free)
    world->device_transport_free (world->device_transport);
  MPI_Initialized (&inited);
  MPI_Finalized (&finalized);
  if (inited && !finalized)
    MPI_Finalize ();
  if (world)
    g_free (world->hosts);
  g_clear_pointer (&world, g_free);
}

void
nl_comm_abort (NlComm *comm, int code)
{
  if (!comm)
    return;
  fflush (stdout);
  fflush (stderr);
  MPI_Abort (MPI_COMM_WORLD, code);
  _exit (code);
}

static gboolean
allreduce (NlComm *comm, void *x, int64_t n, MPI_Datatype type, MPI_Op op, const char *what, GError **error)
{
  /* MPI counts are int: large buffers go in pieces */
  const int64_t piece = G_MAXINT / 2;
  int size = 0;
  MPI_Type_size (type, &size);
  for (int64_t done = 0; done < n; done += piece)
    {
      int count = (int) MIN (piece, n - done);
      collective_begin (what);
      int rc = MPI_Allreduce (MPI_IN_PLACE, (char *) x + done * size, count, type, op,
                              (MPI_Comm) comm->host_transport);
      if (!collective_end (rc, what, error))
        return FALSE;
    }
  return TRUE;
}

gboolean
nl_comm_allreduce_f32 (NlComm *comm, float *x, int64_t n, GError **error)
{
  int go = group_check (comm, error);
  return go == 0 || (go > 0 && allreduce (comm, x, n, MPI_FLOAT, MPI_SUM, "all-reduce", error));
}

gboolean
nl_comm_allreduce_f64 (NlComm *comm, double *x, int64_t n, GError **error)
{
  int go = group_check (comm, error);
  return go == 0 || (go > 0 && allreduce (comm, x, n, MPI_DOUBLE, MPI_SUM, "all-reduce", error));
}

gboolean
nl_comm_allreduce_max_f64 (NlComm *comm, double *x, int64_t n, GError **error)
{
  int go = group_check (comm, error);
  return go == 0 || (go > 0 && allreduce (comm, x, n, MPI_DOUBLE, MPI_MAX, "all-reduce", error));
}

gboolean
nl_comm_broadcast (NlComm *comm, void *x, size_t nbytes, int root, GError **error)
{
  const size_t piece = G_MAXINT / 2;
  int go = group_check (comm, error);
  if (go <= 0)
    return go == 0;
  for (size_t done = 0; done < nbytes; done += piece)
    {
      collective_begin ("broadcast");
      int rc = MPI_Bcast ((char *) x + done, (int) MIN (piece, nbytes - done), MPI_BYTE, root,
                          (MPI_Comm) comm->host_transport);
      if (!collective_end (rc, "broadcast", error))
        return FALSE;
    }
  return TRUE;
}

gboolean
nl_comm_allgather_u64 (NlComm *comm, guint64 x, guint64 *out, GError **error)
{
  int go = group_check (comm, error);
  if (go <= 0)
    {
      out[0] = x;
      return go == 0;
    }
  collective_begin ("all-gather");
  int rc = MPI_Allgather (&x, 1, MPI_UINT64_T, out, 1, MPI_UINT64_T, (MPI_Comm) comm->host_transport);
  return collective_end (rc, "all-gather", error);
}

#else /* no MPI: only a group of one exists */

gboolean
nl_comm_world_init (GError **error)
{
  if (!nl_comm_launched ())
    return TRUE;
  const char *size = g_getenv ("OMPI_COMM_WORLD_SIZE");
  if (size && atoi (size) <= 1)
    return TRUE;
  g_set_error (error, NL_COMM_ERROR, NL_COMM_ERROR_UNAVAILABLE,
               "this netloom was built without MPI, so it cannot train across processes under mpirun "
               "(install libopenmpi-dev and rebuild; the meson option mpi)");
  return FALSE;
}

void nl_comm_world_finalize (void) {}
void nl_comm_abort (NlComm *comm, int code) { (void) comm; (void) code; }
/* without MPI no group has a transport: a group of one is a no-op, a
 * larger one an error */
gboolean nl_comm_allreduce_f32 (NlComm *c, float *x, int64_t n, GError **e) { (void) x; (void) n; return group_check (c, e) == 0; }
gboolean nl_comm_allreduce_f64 (NlComm *c, double *x, int64_t n, GError **e) { (void) x; (void) n; return group_check (c, e) == 0; }
gboolean nl_comm_allreduce_max_f64 (NlComm *c, double *x, int64_t n, GError **e) { (void) x; (void) n; return group_check (c, e) == 0; }
gboolean nl_comm_broadcast (NlComm *c, void *x, size_t b, int r, GError **e) { (void) x; (void) b; (void) r; return group_check (c, e) == 0; }

gboolean
nl_comm_allgather_u64 (NlComm *comm, guint64 x, guint64 *out, GError **error)
{
  out[0] = x;
  return group_check (comm, error) == 0;
}

#endif

gboolean
nl_comm_broadcast_bytes (NlComm *comm, char **data, size_t *len, int root, GError **error)
{
  guint64 n = *len;
  if (!comm || comm->size <= 1)
    return TRUE;
  if (!nl_comm_broadcast (comm, &n, sizeof n, root, error))
    return FALSE;
  if (comm->rank != root)
    {
      *data = g_malloc (n + 1);
      (*data)[n] = 0;
      *len = n;
    }
  return nl_comm_broadcast (comm, *data, n, root, error);
}

char *
nl_comm_describe_hosts (NlComm *comm, GError **error)
{
  const char *host = g_get_host_name ();
  g_autoptr (GString) all = g_string_new (NULL);
  g_autofree char *joined = NULL;
  size_t len;
  if (!comm || comm->size <= 1)
    return g_strdup_printf ("%s x1", host);
  /* every rank broadcasts its host name in turn (a job starts once) */
  for (int r = 0; r < comm->size; r++)
    {
      char *name = r == comm->rank ? g_strdup (host) : NULL;
      len = name ? strlen (name) : 0;
      if (!nl_comm_broadcast_bytes (comm, &name, &len, r, error))
        return NULL;
      g_string_append_printf (all, "%s%s", r ? "\n" : "", name);
      g_free (name);
    }
  {
    g_auto (GStrv) names = g_strsplit (all->str, "\n", -1);
    g_autoptr (GString) out = g_string_new (NULL);
    for (int i = 0; names[i]; i++)
      {
        int count = 0;
        gboolean seen = FALSE;
        for (int j = 0; names[j]; j++)
          {
            count += !strcmp (names[i], names[j]);
            seen = seen || (j < i && !strcmp (names[i], names[j]));
          }
        if (!seen)
          g_string_append_printf (out, "%s%s x%d", out->len ? ", " : "", names[i], count);
      }
    joined = g_string_free (g_steal_pointer (&out), FALSE);
  }
  return g_steal_pointer (&joined);
}
