/* nl-training-page-mpi.c — the Training page's runs of several processes:
 * Start launches `mpirun -np N netloom-cli train --project P ...` with the
 * form's settings as a child process (GSubprocess, never waited for on the
 * main loop); rank 0 writes the run into the project and the dashboard
 * follows it there as it follows any netloom-cli run. Pause, Continue and
 * Stop are signals to mpirun, which Open MPI passes on to every rank
 * (SIGTSTP and SIGCONT by default, SIGTERM as the job's end). */
#include "ui/training/nl-training-page-private.h"
#include <glib/gi18n.h>
#include "engine/session/nl-run-args.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

gboolean
_nl_training_page_mpi_wanted (NlTrainingPage *page)
{
  return nl_training_group_get_processes (page->training) > 1;
}

/* netloom-cli: $NETLOOM_CLI, else beside this program (the build tree and
 * an installation keep both in one folder), else in PATH. */
static char *
find_cli (void)
{
  const char *env = g_getenv ("NETLOOM_CLI");
  g_autofree char *self = g_file_read_link ("/proc/self/exe", NULL);

  if (env && *env)
    return g_strdup (env);
  if (self)
    {
      g_autofree char *dir = g_path_get_dirname (self);
      g_autofree char *sibling = g_build_filename (dir, "netloom-cli", NULL);
      if (g_file_test (sibling, G_FILE_TEST_IS_EXECUTABLE))
        return g_steal_pointer (&sibling);
    }
  return g_find_program_in_path ("netloom-cli");
}

/* The job's command line for R (a new run; the pipeline is applied here). */
static GPtrArray *
job_argv (NlTrainingPage *page, StartRequest *r, GError **error)
{
  const char *mpirun = nl_training_group_get_mpirun (page->training);
  const char *hostfile = nl_training_group_get_hostfile (page->training);
  const NlPipelineInfo *pl = _nl_training_page_form_pipeline (page);
  g_autoptr (GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *cli = find_cli ();
  g_auto (GStrv) options = NULL;

  if (r->kind != START_TRAIN)
    {
      g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG, _("A fork trains in this process: set Processes to 1 "
                     "(or run netloom-cli fork under mpirun)"));
      return NULL;
    }
  if (!cli)
    {
      g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG, _("netloom-cli was found neither beside netloom nor "
                     "in PATH: it trains the processes under mpirun"));
      return NULL;
    }
  if (!pl || !nl_run_config_apply_pipeline (&r->rc, pl, error))
    return NULL;
  if (!(options = nl_run_config_to_cli_args (&r->rc, error)))
    return NULL;
  r->batch_size = r->rc.batch_size;

  g_ptr_array_add (argv, g_strdup (mpirun));
  if (geteuid () == 0)
    g_ptr_array_add (argv, g_strdup ("--allow-run-as-root"));
  if (hostfile)
    {
      g_ptr_array_add (argv, g_strdup ("--hostfile"));
      g_ptr_array_add (argv, g_strdup (hostfile));
    }
  else
    g_ptr_array_add (argv, g_strdup ("--oversubscribe"));  /* all here: more processes than cores is the user's call */
  g_ptr_array_add (argv, g_strdup ("-np"));
  g_ptr_array_add (argv, g_strdup_printf ("%d", nl_training_group_get_processes (page->training)));
  g_ptr_array_add (argv, g_steal_pointer (&cli));
  g_ptr_array_add (argv, g_strdup ("train"));
  g_ptr_array_add (argv, g_strdup ("--project"));
  g_ptr_array_add (argv, g_strdup (nl_project_path (nl_workspace_get_project (r->ws))));
  g_ptr_array_add (argv, g_strdup ("--network"));
  g_ptr_array_add (argv, g_strdup (r->network));
  if (r->name)
    {
      g_ptr_array_add (argv, g_strdup ("--name"));
      g_ptr_array_add (argv, g_strdup (r->name));
    }
  for (char **o = options; *o; o++)
    g_ptr_array_add (argv, g_strdup (*o));
  g_ptr_array_add (argv, NULL);
  return g_steal_pointer (&argv);
}

static void
set_status (NlTrainingPage *page, const char *what)
{
  g_autofree char *text = g_strdup_printf (_("%d processes · %s"), page->job_processes, what);
  nl_training_dashboard_set_status (page->dashboard, text);
}

static gboolean
is_ruler (const char *l)
{
  return *l && strspn (l, "-=") == strlen (l);
}

/* What stderr says went wrong: netloom's own last message, else the first
 * paragraph of mpirun's last boxed message (between rulers), else the last
 * line. */
static char *
failure_line (const char *err)
{
  g_auto (GStrv) lines = g_strsplit (err ? err : "", "\n", -1);
  guint n = g_strv_length (lines);
  int box_end = -1, box_start = -1;
  const char *last = NULL;

  for (guint i = 0; i < n; i++)
    g_strstrip (lines[i]);
  for (guint i = n; i-- > 0;)
    {
      const char *l = lines[i];
      if (g_str_has_prefix (l, "netloom-cli:") || g_str_has_prefix (l, "netloom:"))
        return g_strdup (l);
      if (!last && *l && !is_ruler (l))
        last = l;
      if (is_ruler (l) && box_start < 0)
        {
          if (box_end < 0)
            box_end = (int) i;
          else if (box_end > (int) i + 1)
            box_start = (int) i;
          else
            box_end = (int) i;  /* two rulers in a row: the box ends here */
        }
    }
  if (box_start >= 0)
    {
      g_autoptr (GString) para = g_string_new (NULL);
      for (int i = box_start + 1; i < box_end && (*lines[i] || para->len == 0); i++)
        if (*lines[i])
          g_string_append_printf (para, "%s%s", para->len ? " " : g_str_has_prefix (lines[i], "mpirun") ? ""
                                                                   : "mpirun: ", lines[i]);
      if (para->len)
        return g_string_free (g_steal_pointer (&para), FALSE);
    }
  return g_strdup (last);
}

/* "run N finished" / "run N did not finish": rank 0's last line. */
static gint64
run_of_output (const char *out)
{
  const char *p = out, *found = NULL;
  while (p && (p = strstr (p, "run ")))
    {
      if (p == out || p[-1] == '\n')
        found = p;
      p += 4;
    }
  return found ? g_ascii_strtoll (found + 4, NULL, 10) : 0;
}

static char *
text_of (GBytes *bytes)
{
  gsize n = 0;
  const char *data = bytes ? g_bytes_get_data (bytes, &n) : NULL;
  return g_utf8_make_valid (data ? data : "", (gssize) n);
}

typedef struct {
  NlTrainingPage *page;        /* a reference */
  NlWorkspace *ws;             /* a reference */
} Job;

static void
job_done (GObject *source, GAsyncResult *res, gpointer data)
{
  Job *job = data;
  NlTrainingPage *page = job->page;
  GSubprocess *proc = G_SUBPROCESS (source);
  g_autoptr (GBytes) out_bytes = NULL, err_bytes = NULL;
  g_autofree char *out = NULL, *err = NULL, *line = NULL;
  g_autoptr (GError) error = NULL;
  gboolean read = g_subprocess_communicate_finish (proc, res, &out_bytes, &err_bytes, &error);
  gint64 run;

  /* read as bytes: a message quoting a file name in another encoding
   * still says what went wrong */
  out = text_of (out_bytes);
  err = text_of (err_bytes);
  run = run_of_output (out);

  nl_workspace_notify (job->ws, NL_WORKSPACE_RUNS | NL_WORKSPACE_METRICS);
  if (page->job != proc)
    goto done;  /* abandoned: the project was closed, or the page went */
  g_clear_object (&page->job);
  /* mpirun may end before rank 0's last line reaches it (a stop): then the
   * run the dashboard followed since Start, which is the job's */
  if (run <= 0)
    run = nl_training_dashboard_get_followed_run (page->dashboard);
  if (run > 0)
    page->run = run;
  if (!read)
    {
      page->state = NL_TRAINING_FAILED;
      line = g_strdup_printf ("mpirun: %s", error->message);
    }
  else if (page->stop_requested)
    page->state = NL_TRAINING_STOPPED;
  else if (g_subprocess_get_successful (proc))
    page->state = NL_TRAINING_FINISHED;
  else
    {
      g_autofree char *why = failure_line (err);
      page->state = NL_TRAINING_FAILED;
      line = why ? g_steal_pointer (&why)
             : g_subprocess_get_if_signaled (proc)
               ? g_strdup_printf (_("mpirun ended by signal %d"), g_subprocess_get_term_sig (proc))
               : g_strdup_printf (_("mpirun exited with status %d"), g_subprocess_get_exit_status (proc));
    }
  if (line)
    {
      _nl_training_page_show_error (page, line);
      nl_training_dashboard_log (page->dashboard, "ERROR", line);
    }
  else
    nl_training_dashboard_log (page->dashboard, "STATUS", page->state == NL_TRAINING_STOPPED
                                                            ? _("the processes stopped") : _("the processes finished"));
  set_status (page, page->state == NL_TRAINING_FINISHED ? "finished"
                    : page->state == NL_TRAINING_STOPPED ? "stopped" : "failed");
  page->stop_requested = FALSE;
  _nl_training_page_update_actions (page);
  /* the run's last points and status, however short it was */
  if (run > 0)
    nl_training_dashboard_follow_run (page->dashboard, run);
done:
  g_object_unref (job->page);
  g_object_unref (job->ws);
  g_free (job);
}

gboolean
_nl_training_page_mpi_start (NlTrainingPage *page, GError **error)
{
  g_autoptr (GSubprocessLauncher) launcher = NULL;
  g_autoptr (GPtrArray) argv = NULL;
  g_autofree char *shown = NULL;
  StartRequest *r;
  Job *job;

  if (!(r = _nl_training_page_form_request (page, error)))
    return FALSE;
  if (!(argv = job_argv (page, r, error)))
    {
      _start_request_free (r);
      return FALSE;
    }
  launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE);
  page->job = g_subprocess_launcher_spawnv (launcher, (const char *const *) argv->pdata, error);
  if (!page->job)
    {
      _start_request_free (r);
      return FALSE;
    }
  page->job_processes = nl_training_group_get_processes (page->training);
  page->state = NL_TRAINING_RUNNING;
  page->stop_requested = FALSE;
  page->run = 0;
  nl_training_dashboard_reset (page->dashboard, r->title, r->epochs, r->batch_size, r->lr, r->lr_schedule);
  /* the job's run appears in the project as another process's: followed */
  nl_training_dashboard_stop_following (page->dashboard);
  shown = g_strjoinv (" ", (char **) argv->pdata);
  nl_training_dashboard_log (page->dashboard, "STATUS", shown);
  set_status (page, "starting…");
  job = g_new0 (Job, 1);
  job->page = g_object_ref (page);
  job->ws = g_object_ref (r->ws);
  g_subprocess_communicate_async (page->job, NULL, NULL, job_done, job);
  _start_request_free (r);
  _nl_training_page_update_actions (page);
  return TRUE;
}

static void
job_signal (NlTrainingPage *page, int sig)
{
  if (page->job)
    g_subprocess_send_signal (page->job, sig);
}

void
_nl_training_page_mpi_pause (NlTrainingPage *page)
{
  job_signal (page, SIGTSTP);
  page->state = NL_TRAINING_PAUSED;
  nl_training_dashboard_log (page->dashboard, "STATUS", _("paused (every process stopped)"));
  set_status (page, "paused");
}

void
_nl_training_page_mpi_resume (NlTrainingPage *page)
{
  job_signal (page, SIGCONT);
  page->state = NL_TRAINING_RUNNING;
  nl_training_dashboard_log (page->dashboard, "STATUS", "running");
  set_status (page, "running");
}

void
_nl_training_page_mpi_stop (NlTrainingPage *page)
{
  if (page->state == NL_TRAINING_PAUSED)
    job_signal (page, SIGCONT);  /* stopped processes honour nothing */
  job_signal (page, SIGTERM);
  page->stop_requested = TRUE;
  set_status (page, "stopping…");
}

/* The page lets go of its job (the project closes, the page goes): the
 * job is stopped, and its end is no longer the page's business. */
void
_nl_training_page_mpi_abandon (NlTrainingPage *page)
{
  if (!page->job)
    return;
  _nl_training_page_mpi_stop (page);
  g_clear_object (&page->job);
  page->stop_requested = FALSE;
}
