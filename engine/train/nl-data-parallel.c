/* nl-data-parallel.c — the job, the per-rank settings and the starting
 * model of a data-parallel run (nl-data-parallel.h). */
#include "engine/train/nl-data-parallel.h"
#include "core/nl-device.h"

#include <stdlib.h>
#include <unistd.h>

/* between the network and the settings: never in JSON text */
#define JOB_SEPARATOR "\n\x1e\n"

char *
nl_dp_job_text (const NlNetwork *net, const NlRunConfig *cfg)
{
  g_auto (NlRunConfig) same = { 0 };
  g_autofree char *net_json = nl_network_to_json (net);
  g_autofree char *cfg_json = NULL;

  /* what may differ between the ranks of one job */
  nl_run_config_copy (&same, cfg);
  same.threads = 0;
  same.workers = 0;
  same.scheduler_workers = 0;
  same.device.index = 0;
  cfg_json = nl_run_config_to_json (&same);
  /* the settings a run row does not store but every rank needs: the kind
   * of device (not which: each rank its own), the evaluation data */
  return g_strdup_printf ("%s" JOB_SEPARATOR "%s" JOB_SEPARATOR "%s" JOB_SEPARATOR "%s" JOB_SEPARATOR "%d", net_json,
                          cfg_json, nl_device_kind (cfg->device),
                          cfg->val_dataset ? cfg->val_dataset : "", cfg->preload);
}

static guint64
hash_text (const char *text)
{
  /* FNV-1a: a job fingerprint, not a security check */
  guint64 h = 0xcbf29ce484222325ULL;
  for (const unsigned char *p = (const unsigned char *) text; *p; p++)
    h = (h ^ *p) * 0x100000001b3ULL;
  return h;
}

gboolean
nl_dp_share_job (NlComm *comm, const NlNetwork *given_net, const NlRunConfig *given_cfg, NlNetwork **net,
                 NlRunConfig *cfg, GError **error)
{
  g_autofree char *job = NULL, *mine = NULL;
  g_autofree guint64 *hashes = NULL;
  g_autoptr (GString) differ = g_string_new (NULL);
  size_t len = 0;

  if (!comm || comm->size <= 1)
    return TRUE;
  if (comm->rank == 0)
    {
      job = nl_dp_job_text (*net, cfg);
      len = strlen (job);
    }
  if (!nl_comm_broadcast_bytes (comm, &job, &len, 0, error))
    return FALSE;
  /* each rank's fingerprint of what it was itself told to run */
  mine = given_net && given_cfg ? nl_dp_job_text (given_net, given_cfg) : g_strdup (job);
  hashes = g_new0 (guint64, comm->size);
  if (!nl_comm_allgather_u64 (comm, hash_text (mine), hashes, error))
    return FALSE;
  for (int r = 1; r < comm->size; r++)
    if (hashes[r] != hashes[0])
      g_string_append_printf (differ, "%s%d", differ->len ? ", " : "", r);
  if (differ->len)
    {
      g_set_error (error, NL_COMM_ERROR, NL_COMM_ERROR_MISMATCH,
                   "rank%s %s of %d run%s another network or other settings than rank 0: every process "
                   "of the job must be started with the same command line and files",
                   strchr (differ->str, ',') ? "s" : "", differ->str, comm->size, strchr (differ->str, ',') ? "" : "s");
      return FALSE;
    }
  if (comm->rank == 0)
    return TRUE;
  /* rank 0's network, settings, device kind, evaluation data, preload */
  {
    g_auto (GStrv) part = g_strsplit (job, JOB_SEPARATOR, 5);
    g_return_val_if_fail (g_strv_length (part) == 5, FALSE);
    *net = nl_network_load_data (part[0], -1, error);
    if (!*net)
      return FALSE;
    nl_run_config_init (cfg);
    if (!nl_run_config_from_json (cfg, part[1], error) || !nl_device_parse (part[2], &cfg->device, error))
      return FALSE;
    nl_run_config_set_text (&cfg->val_dataset, *part[3] ? part[3] : NULL);
    cfg->preload = atoi (part[4]) != 0;
    return TRUE;
  }
}

/* per process: the command's jobs are over (one command a process) */
static gboolean jobs_ended;

static gboolean
job_flag (NlComm *comm, gint32 *flag, GError **error)
{
  return nl_comm_broadcast (comm, flag, sizeof *flag, 0, error);
}

gboolean
nl_dp_announce_job (NlComm *comm, GError **error)
{
  gint32 flag = 1;
  if (!comm || comm->size <= 1)
    return TRUE;
  g_return_val_if_fail (comm->rank == 0 && !jobs_ended, FALSE);
  return job_flag (comm, &flag, error);
}

void
nl_dp_end_jobs (NlComm *comm)
{
  g_autoptr (GError) error = NULL;
  gint32 flag = 0;
  if (!comm || comm->size <= 1 || comm->rank != 0 || jobs_ended)
    return;
  jobs_ended = TRUE;
  /* a failure here is the collective's own: it says so and ends the job */
  if (!job_flag (comm, &flag, &error))
    g_warning ("%s", error->message);
}

gboolean
nl_dp_next_job (NlComm *comm, gboolean *more, GError **error)
{
  gint32 flag = 0;
  *more = FALSE;
  if (!comm || comm->size <= 1 || jobs_ended)
    return TRUE;
  g_return_val_if_fail (comm->rank > 0, FALSE);
  if (!job_flag (comm, &flag, error))
    return FALSE;
  *more = flag != 0;
  jobs_ended = !*more;
  return TRUE;
}

gboolean
nl_dp_jobs_ended (void)
{
  return jobs_ended;
}

void
nl_dp_local_settings (NlComm *comm, NlRunConfig *cfg)
{
  if (!comm || comm->size <= 1)
    return;
  if (cfg->threads <= 0)
    {
      long cores = sysconf (_SC_NPROCESSORS_ONLN);
      cfg->threads = (int) MAX (1, cores / MAX (comm->local_size, 1));
    }
  /* each local rank its own device of the kind (round robin past the last) */
  cfg->device = nl_device_for_rank (cfg->device, comm->local_rank);
}

gboolean
nl_dp_broadcast_model (NlComm *comm, NlModel *m, GError **error)
{
  NlTensor **groups[3] = { m->weights, m->aux, m->opt_state };
  int counts[3] = { m->n_nodes * NL_GRAPH_MAX_SLOTS, m->n_nodes * NL_GRAPH_MAX_SLOTS,
                    m->n_nodes * NL_GRAPH_MAX_SLOTS * 4 };

  if (!comm || comm->size <= 1)
    return TRUE;
  /* the CPU tensors are the model's face: bring them up to date, send
   * rank 0's, and let the next step upload them */
  if (!nl_model_sync (m, error))
    return FALSE;
  for (int g = 0; g < 3; g++)
    for (int i = 0; groups[g] && i < counts[g]; i++)
      if (groups[g][i]
          && !nl_comm_broadcast (comm, nl_tensor_f32 (groups[g][i]),
                                 (size_t) nl_tensor_numel (groups[g][i]) * sizeof (float), 0, error))
        return FALSE;
  nl_model_host_changed (m);
  return TRUE;
}
