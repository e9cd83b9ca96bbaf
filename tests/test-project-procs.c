/* test-project-procs.c — the project file shared by processes: a training
 * process writing while another reads (no "database is locked", the reader
 * sees every row in order, both keep going), and a writer
 * killed with SIGKILL at random moments (the file stays consistent, every
 * checkpoint is whole, the run is marked interrupted). Children are
 * fork()ed and open their own connections. */
#include <glib/gstdio.h>
#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "projects/nl-project.h"

static const char net_json[] = "{\"format\":\"netloom.network\",\"version\":1,\"name\":\"n\",\"nodes\":[]}";

static void
rm_rf (const char *dir)
{
  GDir *d = g_dir_open (dir, 0, NULL);
  if (!d)
    return;
  const char *name;
  while ((name = g_dir_read_name (d)))
    {
      g_autofree char *f = g_build_filename (dir, name, NULL);
      g_unlink (f);
    }
  g_dir_close (d);
  g_rmdir (dir);
}

/* In a child: report the error and leave without running atexit handlers. */
static void G_GNUC_NORETURN
child_fail (const char *what, GError *error)
{
  g_printerr ("child %d: %s: %s\n", getpid (), what, error ? error->message : "failed");
  _exit (1);
}

static void
write_line (int fd, const char *line)
{
  gsize len = strlen (line), done = 0;
  while (done < len)
    {
      ssize_t n = write (fd, line + done, len - done);
      if (n <= 0)
        _exit (3);
      done += (gsize) n;
    }
}

static char *
read_all (int fd)
{
  GString *s = g_string_new (NULL);
  char buf[256];
  ssize_t n;
  while ((n = read (fd, buf, sizeof buf)) > 0)
    g_string_append_len (s, buf, n);
  return g_string_free (s, FALSE);
}

static void
assert_child_ok (pid_t pid)
{
  int status = 0;
  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
  if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
    g_error ("child %d failed (status 0x%x)", pid, status);
}

/* The blob of a checkpoint at STEP: a pattern the checker can recompute. */
static void
fill_blob (guint8 *blob, gsize size, gint64 step)
{
  guint32 x = (guint32) step * 2654435761u + 1;
  for (gsize i = 0; i < size; i += 4)
    {
      x = x * 1664525u + 1013904223u;
      memcpy (blob + i, &x, MIN (4, size - i));
    }
}

/* ---- writer and reader at once ---- */

#define WRITE_SECONDS 3.0
#define POINTS_PER_MS 10

static void
writer_main (const char *path, gint64 run, int out_fd)
{
  GError *error = NULL;
  NlProject *p = nl_project_open (path, FALSE, &error);
  if (!p)
    child_fail ("open", error);
  if (!nl_project_set_run_status (p, run, "running", NULL, &error))
    child_fail ("status", error);
  NlMetricWriter *w = nl_metric_writer_new (p, 250, 512);
  gsize blob_size = 256 * 1024;
  guint8 *blob = g_malloc (blob_size);
  gint64 t0 = g_get_monotonic_time (), next_ckpt = t0;
  gint64 step = 0, max_add_us = 0, max_ckpt_us = 0, n_ckpt = 0;
  while (g_get_monotonic_time () - t0 < WRITE_SECONDS * G_USEC_PER_SEC)
    {
      /* A burst of points like a training step's, then a pause. */
      gint64 a0 = g_get_monotonic_time ();
      for (int i = 0; i < POINTS_PER_MS / 2; i++)
        {
          step++;
          NlMetricPoint loss = { .run = run, .step = step, .epoch = 1, .split = "train", .name = "loss",
                                 .value = 1.0 / step };
          NlMetricPoint acc = { .run = run, .step = step, .epoch = 1, .split = "train", .name = "accuracy",
                                .value = 1.0 - 1.0 / step };
          nl_metric_writer_add (w, &loss);
          nl_metric_writer_add (w, &acc);
        }
      max_add_us = MAX (max_add_us, g_get_monotonic_time () - a0);
      /* A checkpoint now and then, written synchronously like the trainer's. */
      if (g_get_monotonic_time () >= next_ckpt)
        {
          gint64 c0 = g_get_monotonic_time ();
          fill_blob (blob, blob_size, step);
          if (!nl_project_add_checkpoint (p, run, 1, step, blob, blob_size, "accuracy", 1.0 - 1.0 / step, TRUE,
                                          2, &error))
            child_fail ("checkpoint", error);
          max_ckpt_us = MAX (max_ckpt_us, g_get_monotonic_time () - c0);
          n_ckpt++;
          next_ckpt = g_get_monotonic_time () + 300 * 1000;
        }
      g_usleep (1000);
    }
  gint64 f0 = g_get_monotonic_time ();
  if (!nl_metric_writer_free (w, &error))
    child_fail ("metric writer", error);
  gint64 flush_us = g_get_monotonic_time () - f0;
  if (!nl_project_set_run_status (p, run, "finished", NULL, &error))
    child_fail ("status", error);
  double secs = (g_get_monotonic_time () - t0) / 1e6;
  g_autofree char *line = g_strdup_printf ("%" G_GINT64_FORMAT " %" G_GINT64_FORMAT " %" G_GINT64_FORMAT
                                           " %" G_GINT64_FORMAT " %" G_GINT64_FORMAT " %.3f\n",
                                           2 * step, max_add_us, max_ckpt_us, n_ckpt, flush_us, secs);
  write_line (out_fd, line);
  nl_project_close (p);
  g_free (blob);
  _exit (0);
}

static void
reader_main (const char *path, gint64 run, int out_fd)
{
  GError *error = NULL;
  NlProject *p = nl_project_open (path, FALSE, &error);
  if (!p)
    child_fail ("open", error);
  gint64 after = 0, rows = 0, polls = 0, growing_polls = 0, max_poll_us = 0;
  gint64 last_step[2] = { 0, 0 };
  gint64 t_end = g_get_monotonic_time () + 20 * G_USEC_PER_SEC;
  gboolean finished = FALSE;
  while (g_get_monotonic_time () < t_end)
    {
      /* Read the status first: once it says finished, this poll sees every row. */
      NlRunInfo *r = nl_project_get_run (p, run, &error);
      if (!r)
        child_fail ("get run", error);
      finished = g_strcmp0 (r->status, "finished") == 0;
      nl_run_info_free (r);

      gint64 p0 = g_get_monotonic_time (), last = 0;
      GArray *got = nl_project_get_metrics (p, run, NULL, after, &last, &error);
      if (!got)
        child_fail ("get metrics", error);
      max_poll_us = MAX (max_poll_us, g_get_monotonic_time () - p0);
      for (guint i = 0; i < got->len; i++)
        {
          NlMetricRow *m = &g_array_index (got, NlMetricRow, i);
          int k = strcmp (m->name, "loss") == 0 ? 0 : 1;
          if (m->rowid <= after || m->step != last_step[k] + 1)
            {
              g_printerr ("reader: out of order: rowid %" G_GINT64_FORMAT " after %" G_GINT64_FORMAT
                          ", %s step %" G_GINT64_FORMAT " after %" G_GINT64_FORMAT "\n",
                          m->rowid, after, m->name, m->step, last_step[k]);
              _exit (1);
            }
          after = m->rowid;
          last_step[k] = m->step;
        }
      if (got->len && last != after)
        child_fail ("last_rowid is not the last row", NULL);
      rows += got->len;
      growing_polls += got->len > 0;
      polls++;
      g_array_unref (got);

      /* What a GUI's run table and checkpoint list would also read. */
      double mn, mx, la;
      if (!nl_project_metric_summary (p, run, "loss", "train", &mn, &mx, &la, &error))
        child_fail ("summary", error);
      GArray *cks = nl_project_list_checkpoints (p, run, &error);
      if (!cks)
        child_fail ("list checkpoints", error);
      g_array_unref (cks);
      if (finished)
        break;
      g_usleep (20000);
    }
  if (!finished)
    child_fail ("the writer never finished", NULL);
  g_autofree char *line = g_strdup_printf ("%" G_GINT64_FORMAT " %" G_GINT64_FORMAT " %" G_GINT64_FORMAT
                                           " %" G_GINT64_FORMAT "\n", rows, polls, growing_polls, max_poll_us);
  write_line (out_fd, line);
  nl_project_close (p);
  _exit (0);
}

static pid_t
spawn (void (*fn) (const char *, gint64, int), const char *path, gint64 run, int *read_fd)
{
  int fds[2];
  g_assert_cmpint (pipe (fds), ==, 0);
  pid_t pid = fork ();
  g_assert_cmpint (pid, >=, 0);
  if (pid == 0)
    {
      close (fds[0]);
      fn (path, run, fds[1]);
      _exit (2);
    }
  close (fds[1]);
  *read_fd = fds[0];
  return pid;
}

static void
test_writer_reader (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("nl-project-procs-XXXXXX", &error);
  g_autofree char *path = g_build_filename (dir, "shared.netloom", NULL);
  NlProject *p = nl_project_open (path, TRUE, &error);
  g_assert_no_error (error);
  NlRunInfo info = { .name = (char *) "shared", .network_json = (char *) net_json };
  gint64 run = nl_project_create_run (p, &info, &error);
  g_assert_no_error (error);
  nl_project_close (p);

  int wfd, rfd;
  pid_t writer = spawn (writer_main, path, run, &wfd);
  pid_t reader = spawn (reader_main, path, run, &rfd);
  g_autofree char *wline = read_all (wfd);
  g_autofree char *rline = read_all (rfd);
  close (wfd);
  close (rfd);
  assert_child_ok (writer);
  assert_child_ok (reader);

  gint64 w_rows, max_add_us, max_ckpt_us, n_ckpt, flush_us;
  double secs;
  g_assert_cmpint (sscanf (wline, "%" G_GINT64_FORMAT " %" G_GINT64_FORMAT " %" G_GINT64_FORMAT " %"
                           G_GINT64_FORMAT " %" G_GINT64_FORMAT " %lf", &w_rows, &max_add_us, &max_ckpt_us,
                           &n_ckpt, &flush_us, &secs), ==, 6);
  gint64 r_rows, polls, growing, max_poll_us;
  g_assert_cmpint (sscanf (rline, "%" G_GINT64_FORMAT " %" G_GINT64_FORMAT " %" G_GINT64_FORMAT " %"
                           G_GINT64_FORMAT, &r_rows, &polls, &growing, &max_poll_us), ==, 4);
  g_test_message ("writer: %" G_GINT64_FORMAT " rows in %.2f s (%.0f rows/s), longest add burst %" G_GINT64_FORMAT
                  " us, %" G_GINT64_FORMAT " checkpoints (longest %.1f ms), final flush %.1f ms",
                  w_rows, secs, w_rows / secs, max_add_us, n_ckpt, max_ckpt_us / 1e3, flush_us / 1e3);
  g_test_message ("reader: %" G_GINT64_FORMAT " polls, %" G_GINT64_FORMAT " saw new rows, longest poll %.1f ms",
                  polls, growing, max_poll_us / 1e3);

  /* The reader saw every row, in order (checked in the child), and saw
   * them arrive bit by bit, not all at the end. */
  g_assert_cmpint (r_rows, ==, w_rows);
  g_assert_cmpint (growing, >=, 5);
  /* Checkpoints were written while the reader polled. (How fast the writer
   * went is reported above, not asserted: this is a shared machine; that
   * adding never waits on SQLite is checked by /project-procs/add-under-lock.) */
  g_assert_cmpint (n_ckpt, >=, 2);

  p = nl_project_open (path, FALSE, &error);
  g_assert_no_error (error);
  g_assert_true (nl_project_check (p, &error));
  g_autoptr (GArray) all = nl_project_get_metrics (p, run, NULL, 0, NULL, &error);
  g_assert_cmpint (all->len, ==, w_rows);
  g_autoptr (NlRunInfo) r = nl_project_get_run (p, run, &error);
  g_assert_cmpstr (r->status, ==, "finished");
  nl_project_close (p);
  rm_rf (dir);
}

/* ---- a writer killed at random moments ---- */

#define CRASH_BLOB (1024 * 1024)

static void G_GNUC_NORETURN
crash_child (const char *path, int ready_fd)
{
  GError *error = NULL;
  NlProject *p = nl_project_open (path, FALSE, &error);
  if (!p)
    child_fail ("open", error);
  NlRunInfo info = { .name = (char *) "doomed", .network_json = (char *) net_json, .status = (char *) "running" };
  gint64 run = nl_project_create_run (p, &info, &error);
  if (!run)
    child_fail ("create run", error);
  NlMetricWriter *w = nl_metric_writer_new (p, 20, 64);
  guint8 *blob = g_malloc (CRASH_BLOB);
  g_autofree char *line = g_strdup_printf ("%" G_GINT64_FORMAT "\n", run);
  write_line (ready_fd, line);
  for (gint64 step = 1;; step++)
    {
      for (int i = 0; i < 50; i++)
        {
          NlMetricPoint pt = { .run = run, .step = step * 50 + i, .split = "train", .name = "loss", .value = i };
          nl_metric_writer_add (w, &pt);
        }
      fill_blob (blob, CRASH_BLOB, step);
      if (!nl_project_add_checkpoint (p, run, (int) step, step, blob, CRASH_BLOB, "loss", sin (step * 1.3), FALSE,
                                      2, &error))
        child_fail ("checkpoint", error);
      /* Committed: the parent checks this one survives the kill. */
      g_autofree char *done = g_strdup_printf ("%" G_GINT64_FORMAT "\n", step);
      write_line (ready_fd, done);
    }
}

/* Every checkpoint is whole: the declared size is the stored size and the
 * bytes are those written for its step. */
static int
check_checkpoints (const char *path)
{
  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  sqlite3_stmt *st = NULL;
  g_assert_cmpint (sqlite3_prepare_v2 (db, "SELECT id, size, length (blob), step, blob FROM checkpoints",
                                       -1, &st, NULL), ==, SQLITE_OK);
  int n = 0;
  g_autofree guint8 *expect = g_malloc (CRASH_BLOB);
  while (sqlite3_step (st) == SQLITE_ROW)
    {
      g_assert_cmpint (sqlite3_column_int64 (st, 1), ==, CRASH_BLOB);
      g_assert_cmpint (sqlite3_column_int64 (st, 2), ==, CRASH_BLOB);
      fill_blob (expect, CRASH_BLOB, sqlite3_column_int64 (st, 3));
      g_assert_cmpmem (sqlite3_column_blob (st, 4), sqlite3_column_bytes (st, 4), expect, CRASH_BLOB);
      n++;
    }
  sqlite3_finalize (st);
  sqlite3_close (db);
  return n;
}

static void
test_crash (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("nl-project-crash-XXXXXX", &error);
  g_autofree char *path = g_build_filename (dir, "crash.netloom", NULL);
  NlProject *p = nl_project_open (path, TRUE, &error);
  g_assert_no_error (error);
  nl_project_close (p);

  enum { ROUNDS = 10 };
  gint64 runs[ROUNDS];
  int total_ckpts = 0;
  for (int round = 0; round < ROUNDS; round++)
    {
      int fds[2];
      g_assert_cmpint (pipe (fds), ==, 0);
      pid_t pid = fork ();
      g_assert_cmpint (pid, >=, 0);
      if (pid == 0)
        {
          close (fds[0]);
          crash_child (path, fds[1]);
        }
      close (fds[1]);
      GString *first = g_string_new (NULL);
      char c;
      while (read (fds[0], &c, 1) == 1 && c != '\n')
        g_string_append_c (first, c);
      runs[round] = g_ascii_strtoll (first->str, NULL, 10);
      g_string_free (first, TRUE);
      g_assert_cmpint (runs[round], >, 0);
      /* Somewhere in its loop: mid-checkpoint, mid-batch, mid-commit. */
      g_usleep (g_test_rand_int_range (20, 400) * 1000);
      g_assert_cmpint (kill (pid, SIGKILL), ==, 0);
      int status = 0;
      g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
      g_assert_true (WIFSIGNALED (status) && WTERMSIG (status) == SIGKILL);
      g_autofree char *done = read_all (fds[0]);
      close (fds[0]);
      g_auto (GStrv) done_lines = g_strsplit (g_strstrip (done), "\n", -1);
      guint n_done = g_strv_length (done_lines);
      gint64 last_done = n_done ? g_ascii_strtoll (done_lines[n_done - 1], NULL, 10) : 0;

      gint64 t0 = g_get_monotonic_time ();
      p = nl_project_open (path, FALSE, &error);
      g_assert_no_error (error);
      double open_ms = (g_get_monotonic_time () - t0) / 1e3;
      g_assert_true (nl_project_check (p, &error));
      g_assert_no_error (error);
      for (int k = 0; k <= round; k++)
        {
          g_autoptr (NlRunInfo) r = nl_project_get_run (p, runs[k], &error);
          g_assert_no_error (error);
          g_assert_cmpstr (r->status, ==, "interrupted");
          g_assert_cmpfloat (r->finished, >, 0);
        }
      g_autoptr (GArray) cks = nl_project_list_checkpoints (p, runs[round], &error);
      g_autoptr (GArray) rows = nl_project_get_metrics (p, runs[round], NULL, 0, NULL, &error);
      g_assert_no_error (error);
      /* keep_last 2 plus the best; nothing committed was lost: the newest
       * is the last one reported done, or the one after it when the kill
       * came between its commit and the report. */
      g_assert_cmpuint (cks->len, <=, 3);
      gint64 newest = cks->len ? g_array_index (cks, NlCheckpointInfo, cks->len - 1).step : 0;
      g_assert_cmpint (newest, >=, last_done);
      g_assert_cmpint (newest, <=, last_done + 1);
      for (guint i = 1; i < rows->len; i++)
        g_assert_cmpint (g_array_index (rows, NlMetricRow, i).step, ==,
                         g_array_index (rows, NlMetricRow, i - 1).step + 1);
      nl_project_close (p);
      int n = check_checkpoints (path);
      g_test_message ("round %d: killed after checkpoint %" G_GINT64_FORMAT " (%u kept), %u metric rows;"
                      " reopened in %.1f ms", round, newest, cks->len, rows->len, open_ms);
      total_ckpts = n;
    }
  /* Some rounds must have got as far as writing checkpoints, or the test
   * proved nothing about them. */
  g_assert_cmpint (total_ckpts, >, 0);
  rm_rf (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/project-procs/writer-reader", test_writer_reader);
  g_test_add_func ("/project-procs/crash", test_crash);
  return g_test_run ();
}
