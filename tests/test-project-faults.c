/* test-project-faults.c — SQLite's I/O error testing for the project store
 * (https://sqlite.org/testing.html, "I/O Error Testing"): each operation —
 * creating a project, training with checkpoints, resume, fork, deleting a
 * run, each from open to close — first runs once to count its xOpen, xWrite
 * and xSync calls (nl-fault-vfs.h), then again from the same starting file
 * with the Nth call failing, for N = 1 .. count (a stride when the count is
 * large; the first and last call and every sync always). Faults: a failed
 * write (IOERR_WRITE, once), a full disk (FULL from the Nth write on), a
 * failed fsync (IOERR_FSYNC, once and from the Nth on), a file that cannot be opened (CANTOPEN once,
 * and from the Nth open on: a directory that became read-only). Every time:
 * the operation either succeeds completely or fails with one error naming
 * the project file (no crash, critical or hang), and with the fault gone
 * the project opens (after a full disk or a failed fsync the same
 * connection first goes on, as the GUI's does), PRAGMA integrity_check is
 * ok, every checkpoint row has its whole blob and that blob loads, nothing
 * the operation did not touch changed, and an unfinished run resumes to
 * its end. A chmod 0444 file and
 * a read-only directory are tried as an unprivileged child. */
#include <sqlite3.h>
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "engine/formats/nl-checkpoint.h"
#include "engine/session/nl-run.h"
#include "nl-fault-vfs.h"
#include "nl-test-util.h"

/* Enough points per fault that every kind of write (run rows, metrics,
 * checkpoint blobs, WAL checkpoints at close) is hit, few enough for a
 * busy machine. */
#define MAX_POINTS 30

static const char *net_json =
  "{\"format\":\"netloom.network\",\"version\":1,\"name\":\"tiny\",\"nodes\":["
  "{\"id\":\"data\",\"op\":\"Input\"},{\"id\":\"flat\",\"op\":\"Flatten\"},"
  "{\"id\":\"fc1\",\"op\":\"Dense\",\"params\":{\"units\":8}},"
  "{\"id\":\"act\",\"op\":\"Activation\"},{\"id\":\"fc2\",\"op\":\"Dense\",\"params\":{\"units\":10}}],"
  "\"edges\":[\"data -> flat\",\"flat -> fc1\",\"fc1 -> act\",\"act -> fc2\"]}";

typedef struct {
  char *dir, *path, *base, *spec;
  NlNetwork *net;
  NlRunConfig cfg;
  NlTrainer *checker;   /* its model loads every checkpoint blob */
} Fixture;

static Fixture fx;

typedef struct {
  const char *name;
  /* the starting file at fx.base (none: the file is absent) */
  void (*prepare) (void);
  /* opens the project into *p (NULL when that failed) and acts; FALSE
   * with the error on failure */
  gboolean (*op) (NlProject **p, GError **error);
  /* with the fault gone: the state is whole (ok tells whether op succeeded) */
  void (*verify) (NlProject *p, gboolean ok);
} Op;

typedef struct {
  NlFaultKind kind;
  int rc;
  gboolean persistent;
  const char *label;
  /* after a fault the operation hit, the same connection goes on (as the
   * GUI's does) before it closes; else (and when the fault is still to
   * come) it closes while the fault is armed (its WAL checkpoint) */
  gboolean reuse;
} Fault;

static const Fault faults[] = {
  { NL_FAULT_WRITE, SQLITE_IOERR_WRITE, FALSE, "write", FALSE },
  { NL_FAULT_WRITE, SQLITE_FULL, TRUE, "disk-full", TRUE },
  { NL_FAULT_SYNC, SQLITE_IOERR_FSYNC, FALSE, "fsync", TRUE },
  { NL_FAULT_SYNC, SQLITE_IOERR_FSYNC, TRUE, "fsync-always", FALSE },
  { NL_FAULT_OPEN, SQLITE_CANTOPEN, FALSE, "open", FALSE },
  { NL_FAULT_OPEN, SQLITE_CANTOPEN, TRUE, "read-only-dir", FALSE },
};

static guint total_points, n_resumed, n_no_checkpoint;

/* ---- files ---- */

static void
remove_project (const char *path)
{
  static const char *const suffixes[] = { "", "-wal", "-shm", "-journal" };
  for (guint i = 0; i < G_N_ELEMENTS (suffixes); i++)
    {
      g_autofree char *f = g_strconcat (path, suffixes[i], NULL);
      g_unlink (f);
    }
}

/* The starting file (closed cleanly: no WAL beside it) into place. */
static void
restore_base (void)
{
  g_autofree char *contents = NULL;
  gsize len;
  remove_project (fx.path);
  if (!g_file_test (fx.base, G_FILE_TEST_EXISTS))
    return;
  g_autofree char *wal = g_strconcat (fx.base, "-wal", NULL);
  g_assert_false (g_file_test (wal, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_get_contents (fx.base, &contents, &len, NULL));
  g_assert_true (g_file_set_contents (fx.path, contents, len, NULL));
}

static NlProject *
open_ok (const char *path)
{
  g_autoptr (GError) error = NULL;
  NlProject *p = nl_project_open (path, FALSE, &error);
  g_assert_no_error (error);
  return p;
}

/* ---- training helpers ---- */

static void
set_epochs (NlRunConfig *rc, gpointer user)
{
  rc->epochs = GPOINTER_TO_INT (user);
}

static gboolean
train_run (NlProject *p, int epochs, GError **error)
{
  fx.cfg.epochs = epochs;
  return nl_run_train (p, "r", fx.net, &fx.cfg, NULL, NULL, error);
}

/* The project at fx.base, made by FN on an open project. */
static void
make_base (void (*fn) (NlProject *p))
{
  g_autoptr (GError) error = NULL;
  remove_project (fx.base);
  NlProject *p = nl_project_open (fx.base, TRUE, &error);
  g_assert_no_error (error);
  if (fn)
    fn (p);
  nl_project_close (p);
}

static void
base_one_run (NlProject *p)
{
  g_autoptr (GError) error = NULL;
  g_assert_true (train_run (p, 2, &error));
  g_assert_no_error (error);
}

static void
base_two_runs (NlProject *p)
{
  g_autoptr (GError) error = NULL;
  base_one_run (p);
  g_assert_true (nl_run_fork (p, 1, "last", "child", set_epochs, GINT_TO_POINTER (3), NULL, NULL, NULL, &error));
  g_assert_no_error (error);
}

/* ---- what must hold after every fault ---- */

/* Every checkpoint row of RUN has its whole blob, the blob loads, and an
 * epoch's checkpoint comes with that epoch's metrics (they are written
 * first). Returns how many there are. */
static guint
check_checkpoints (NlProject *p, gint64 run)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) list = nl_project_list_checkpoints (p, run, &error);
  g_assert_no_error (error);
  g_autoptr (GArray) acc = nl_project_get_metrics (p, run, "accuracy", 0, NULL, &error);
  g_assert_no_error (error);
  for (guint i = 0; i < list->len; i++)
    {
      const NlCheckpointInfo *c = &g_array_index (list, NlCheckpointInfo, i);
      gboolean has_points = c->metric_name == NULL;   /* restore-best's copy carries none */
      for (guint j = 0; j < acc->len && !has_points; j++)
        has_points = g_array_index (acc, NlMetricRow, j).epoch == c->epoch
                     && !strcmp (g_array_index (acc, NlMetricRow, j).split, "test");
      g_assert_true (has_points);
      int epoch = 0;
      g_autoptr (GBytes) blob = nl_project_load_checkpoint (p, c->id, NULL, &epoch, NULL, &error);
      g_assert_no_error (error);
      g_assert_cmpint (epoch, ==, c->epoch);
      g_assert_cmpuint (g_bytes_get_size (blob), ==, (gsize) c->size);
      NlTrainPosition pos = { 0 };
      g_assert_true (nl_checkpoint_load (nl_trainer_get_model (fx.checker), blob, FALSE, &pos, &error));
      g_assert_no_error (error);
      g_assert_cmpint (pos.epoch, ==, c->epoch);
      nl_train_position_clear (&pos);
    }
  return list->len;
}

static NlRunInfo *
get_run (NlProject *p, gint64 run)
{
  g_autoptr (GError) error = NULL;
  NlRunInfo *info = nl_project_get_run (p, run, &error);
  g_assert_no_error (error);
  return info;
}

/* RUN, left unfinished by a fault, resumes to its end once the fault is
 * gone. A run the fault left "running" (its status could not be written)
 * is what the next open marks interrupted once its process has ended;
 * this process lives on, so it is marked here. */
static void
resume_to_end (NlProject *p, gint64 run, int epochs)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlRunInfo) info = get_run (p, run);
  if (g_strcmp0 (info->status, "finished") == 0 && info->epochs_done == epochs)
    return;
  if (g_strcmp0 (info->status, "running") == 0)
    g_assert_true (nl_project_set_run_status (p, run, "interrupted", "the test's fault", &error));
  g_assert_no_error (error);
  gboolean has_checkpoint = check_checkpoints (p, run) > 0;
  gboolean ok = nl_run_resume (p, run, epochs, NULL, NULL, &error);
  if (!has_checkpoint && !ok)
    {
      /* a run without a checkpoint cannot resume yet: it says so */
      g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_NOT_FOUND);
      g_assert_nonnull (strstr (error->message, "checkpoint"));
      n_no_checkpoint++;
      return;
    }
  g_assert_no_error (error);
  g_assert_true (ok);
  g_autoptr (NlRunInfo) after = get_run (p, run);
  g_assert_cmpstr (after->status, ==, "finished");
  g_assert_cmpint (after->epochs_done, ==, epochs);
  check_checkpoints (p, run);
  n_resumed++;
}

static guint
n_runs (NlProject *p)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) runs = nl_project_list_runs (p, &error);
  g_assert_no_error (error);
  return runs->len;
}

static guint
n_metrics (NlProject *p, gint64 run)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) m = nl_project_get_metrics (p, run, NULL, 0, NULL, &error);
  g_assert_no_error (error);
  return m->len;
}

/* ---- the operations ---- */

static gboolean create_opened;

static gboolean
op_create (NlProject **p, GError **error)
{
  *p = nl_project_open (fx.path, TRUE, error);
  create_opened = *p != NULL;
  return *p && nl_project_save_network (*p, "tiny", net_json, error) > 0;
}

static void
verify_create (NlProject *p, gboolean ok)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *json = nl_project_load_network (p, "tiny", 0, &error);
  if (ok)
    {
      g_assert_no_error (error);
      g_assert_cmpstr (json, ==, net_json);
    }
  else
    g_clear_error (&error);
  /* a new project's first write works */
  g_assert_cmpint (nl_project_save_network (p, "again", net_json, &error), >, 0);
  g_assert_no_error (error);
}

static gboolean
op_train (NlProject **p, GError **error)
{
  *p = nl_project_open (fx.path, FALSE, error);
  return *p && train_run (*p, 2, error);
}

static void
verify_train (NlProject *p, gboolean ok)
{
  guint n = n_runs (p);
  g_assert_cmpuint (n, <=, 1);
  if (ok)
    g_assert_cmpuint (n, ==, 1);
  if (n == 1)
    resume_to_end (p, 1, 2);
}

static gboolean
op_resume (NlProject **p, GError **error)
{
  *p = nl_project_open (fx.path, FALSE, error);
  return *p && nl_run_resume (*p, 1, 3, NULL, NULL, error);
}

static void
verify_resume (NlProject *p, gboolean ok)
{
  g_autoptr (NlRunInfo) info = get_run (p, 1);
  if (ok)
    {
      g_assert_cmpstr (info->status, ==, "finished");
      g_assert_cmpint (info->epochs_done, ==, 3);
    }
  /* the checkpoint resumed from is never lost */
  g_assert_cmpuint (check_checkpoints (p, 1), >=, 1);
  resume_to_end (p, 1, 3);
}

static gboolean
op_fork (NlProject **p, GError **error)
{
  *p = nl_project_open (fx.path, FALSE, error);
  return *p && nl_run_fork (*p, 1, "last", "child", set_epochs, GINT_TO_POINTER (4), NULL, NULL, NULL, error);
}

static void
verify_fork (NlProject *p, gboolean ok)
{
  g_autoptr (NlRunInfo) parent = get_run (p, 1);
  g_assert_cmpstr (parent->status, ==, "finished");
  g_assert_cmpuint (check_checkpoints (p, 1), ==, 2);
  guint n = n_runs (p);
  g_assert_cmpuint (n, <=, 2);
  if (ok)
    g_assert_cmpuint (n, ==, 2);
  if (n == 2)
    {
      g_autoptr (NlRunInfo) child = get_run (p, 2);
      g_assert_cmpint (child->parent_run, ==, 1);
      resume_to_end (p, 2, 4);
    }
}

static guint base_metrics_1, base_metrics_2;

static gboolean
op_delete (NlProject **p, GError **error)
{
  *p = nl_project_open (fx.path, FALSE, error);
  return *p && nl_project_delete_run (*p, 1, error);
}

static void
verify_delete (NlProject *p, gboolean ok)
{
  g_autoptr (GError) error = NULL;
  NlRunInfo *info = nl_project_get_run (p, 1, &error);
  gboolean gone = info == NULL;
  nl_run_info_free (info);
  if (ok)
    g_assert_true (gone);
  if (gone)
    {
      /* all of it, at once */
      g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_NOT_FOUND);
      g_assert_cmpuint (n_metrics (p, 1), ==, 0);
      g_assert_cmpuint (check_checkpoints (p, 1), ==, 0);
    }
  else
    {
      g_assert_cmpuint (n_metrics (p, 1), ==, base_metrics_1);
      g_assert_cmpuint (check_checkpoints (p, 1), ==, 2);
    }
  g_assert_cmpuint (n_metrics (p, 2), ==, base_metrics_2);
  g_autoptr (NlRunInfo) child = get_run (p, 2);
  g_assert_cmpint (child->parent_run, ==, gone ? 0 : 1);
  g_assert_cmpuint (check_checkpoints (p, 2), >=, 1);
  /* the other run goes on */
  resume_to_end (p, 2, 4);
}

static void
prepare_none (void)
{
  remove_project (fx.base);
}

static void
prepare_empty (void)
{
  make_base (NULL);
}

static void
prepare_one_run (void)
{
  make_base (base_one_run);
}

static void
prepare_two_runs (void)
{
  make_base (base_two_runs);
  NlProject *p = open_ok (fx.base);
  base_metrics_1 = n_metrics (p, 1);
  base_metrics_2 = n_metrics (p, 2);
  g_assert_cmpuint (base_metrics_1, >, 0);
  nl_project_close (p);
}

static const Op ops[] = {
  { "create", prepare_none, op_create, verify_create },
  { "train", prepare_empty, op_train, verify_train },
  { "resume", prepare_one_run, op_resume, verify_resume },
  { "fork", prepare_one_run, op_fork, verify_fork },
  { "delete-run", prepare_two_runs, op_delete, verify_delete },
};

/* ---- the fault loop ---- */

/* One clear error: set, naming the project file, saying what failed. */
static void
check_message (const GError *error, const Fault *f)
{
  g_assert_nonnull (error);
  g_assert_nonnull (error->message);
  if (g_test_verbose ())
    g_printerr ("    %s\n", error->message);
  g_assert_nonnull (strstr (error->message, fx.path));
  g_assert_null (strstr (error->message, "(null)"));
  g_assert_null (strchr (error->message, '\n'));
  /* what failed: "PATH: disk full while saving checkpoint of run 2 (epoch 3)" */
  if (f->kind != NL_FAULT_OPEN)
    g_assert_nonnull (strstr (error->message, " while "));
  if (f->rc == SQLITE_FULL)
    g_assert_nonnull (strstr (error->message, "disk full while"));
}

/* Op from its starting file with the Nth call of F's kind failing, then
 * everything that must hold once the fault is gone. */
static void
run_point (const Op *op, const Fault *f, int n)
{
  g_autoptr (GError) error = NULL;
  NlProject *p = NULL;
  restore_base ();
  nl_fault_vfs_arm (f->kind, n, f->rc, f->persistent);
  gboolean ok = op->op (&p, &error);
  /* a fault not hit yet may be hit by the close (its WAL checkpoint) */
  if (!f->reuse || !nl_fault_vfs_fired ())
    g_clear_pointer (&p, nl_project_close);
  int fired = nl_fault_vfs_fired ();
  nl_fault_vfs_reset ();
  total_points++;
  if (g_test_verbose ())
    g_printerr ("  %s %s #%d: %s (fired %d)\n", op->name, f->label, n, ok ? "ok" : "failed", fired);
  if (ok)
    g_assert_no_error (error);
  else
    check_message (error, f);
  if (!fired)
    g_assert_true (ok);
  g_clear_error (&error);
  if (!ok && op->op == op_create && !create_opened)
    {
      /* a project that could not be made leaves nothing behind */
      static const char *const suffixes[] = { "", "-wal", "-shm", "-journal" };
      for (guint i = 0; i < G_N_ELEMENTS (suffixes); i++)
        {
          g_autofree char *left = g_strconcat (fx.path, suffixes[i], NULL);
          if (g_file_test (left, G_FILE_TEST_EXISTS))
            g_error ("%s is left behind after a failed create (%s #%d)", left, f->label, n);
        }
    }

  /* the fault gone, the same connection goes on: it reads, writes, resumes */
  gboolean reused = p != NULL;
  if (reused)
    {
      g_assert_true (nl_project_check (p, &error));
      g_assert_no_error (error);
      op->verify (p, ok);
      g_assert_true (nl_project_check (p, &error));
      g_assert_no_error (error);
      nl_project_close (p);
    }
  /* and the file opens again (one that failed to be created may be absent) */
  p = nl_project_open (fx.path, op->op == op_create, &error);
  g_assert_no_error (error);
  g_assert_true (nl_project_check (p, &error));
  g_assert_no_error (error);
  if (!reused)
    {
      op->verify (p, ok);
      g_assert_true (nl_project_check (p, &error));
      g_assert_no_error (error);
    }
  nl_project_close (p);
}

static void
test_op (gconstpointer data)
{
  const Op *op = data;
  int counts[NL_FAULT_N_KINDS];
  g_autoptr (GError) error = NULL;

  op->prepare ();
  /* the fault-free run: it succeeds, and gives the counts */
  restore_base ();
  nl_fault_vfs_reset ();
  NlProject *p = NULL;
  g_assert_true (op->op (&p, &error));
  g_assert_no_error (error);
  nl_project_close (p);
  for (int k = 0; k < NL_FAULT_N_KINDS; k++)
    counts[k] = nl_fault_vfs_count (k);
  g_test_message ("%s: %d opens, %d writes, %d syncs", op->name, counts[NL_FAULT_OPEN], counts[NL_FAULT_WRITE],
                  counts[NL_FAULT_SYNC]);
  g_assert_cmpint (counts[NL_FAULT_OPEN], >, 0);
  g_assert_cmpint (counts[NL_FAULT_WRITE], >, 0);

  guint before = total_points, resumed_before = n_resumed, no_checkpoint_before = n_no_checkpoint;
  for (guint i = 0; i < G_N_ELEMENTS (faults); i++)
    {
      const Fault *f = &faults[i];
      int count = counts[f->kind];
      /* every sync; else a stride, always with the first and last call */
      int stride = f->kind == NL_FAULT_SYNC ? 1 : MAX (1, (count + MAX_POINTS - 1) / MAX_POINTS);
      for (int n = 1; n <= count; n += stride)
        run_point (op, f, n);
      if (count > 1 && (count - 1) % stride != 0)
        run_point (op, f, count);
    }
  g_test_message ("%s: %u fault points (%u in all so far); %u unfinished runs resumed to their end, %u had no"
                  " checkpoint to resume from", op->name, total_points - before, total_points,
                  n_resumed - resumed_before, n_no_checkpoint - no_checkpoint_before);
  remove_project (fx.path);
}

/* ---- read-only: a chmod 0444 file, a directory we cannot write ---- */

static char *
file_digest (const char *path)
{
  g_autofree char *contents = NULL;
  gsize len;
  g_assert_true (g_file_get_contents (path, &contents, &len, NULL));
  return g_compute_checksum_for_data (G_CHECKSUM_SHA256, (const guchar *) contents, len);
}

static void
expect_read_only (gboolean ok, GError *error, const char *path)
{
  g_assert_false (ok);
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_READ_ONLY);
  g_assert_nonnull (strstr (error->message, path));
  g_assert_nonnull (strstr (error->message, "read-only"));
}

static void
try_read_only (const char *path)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *before = file_digest (path);
  NlProject *p = nl_project_open (path, FALSE, &error);
  g_assert_no_error (error);
  g_assert_true (nl_project_is_read_only (p));
  fx.cfg.epochs = 1;
  gboolean ok = nl_run_train (p, "r", fx.net, &fx.cfg, NULL, NULL, &error);
  expect_read_only (ok, error, path);
  g_clear_error (&error);
  ok = nl_run_resume (p, 1, 3, NULL, NULL, &error);
  expect_read_only (ok, error, path);
  g_clear_error (&error);
  ok = nl_run_fork (p, 1, "last", NULL, NULL, NULL, NULL, NULL, NULL, &error);
  expect_read_only (ok, error, path);
  g_clear_error (&error);
  ok = nl_project_delete_run (p, 1, &error);
  expect_read_only (ok, error, path);
  g_clear_error (&error);
  g_assert_cmpuint (check_checkpoints (p, 1), ==, 2);
  nl_project_close (p);
  g_autofree char *after = file_digest (path);
  g_assert_cmpstr (before, ==, after);
}

static void
test_read_only (void)
{
  g_autofree char *ro = g_build_filename (fx.dir, "ro.netloom", NULL);
  g_autofree char *sealed_dir = g_build_filename (fx.dir, "sealed", NULL);
  g_autofree char *sealed = g_build_filename (sealed_dir, "p.netloom", NULL);
  if (!g_test_subprocess ())
    {
      prepare_one_run ();
      g_autofree char *contents = NULL;
      gsize len;
      g_assert_true (g_file_get_contents (fx.base, &contents, &len, NULL));
      g_assert_true (g_file_set_contents (ro, contents, len, NULL));
      g_assert_cmpint (g_mkdir (sealed_dir, 0755), ==, 0);
      g_assert_true (g_file_set_contents (sealed, contents, len, NULL));
      g_assert_cmpint (g_chmod (ro, 0444), ==, 0);
      g_assert_cmpint (g_chmod (sealed, 0644), ==, 0);
      g_assert_cmpint (g_chmod (sealed_dir, 0555), ==, 0);
      g_assert_cmpint (g_chmod (fx.dir, 0755), ==, 0);
      g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_INHERIT_STDERR);
      g_test_trap_assert_passed ();
      g_chmod (sealed_dir, 0755);
      return;
    }
  /* chmod does not stop root */
  if (geteuid () == 0 && (setgid (65534) != 0 || setuid (65534) != 0))
    {
      g_test_skip ("cannot drop root privileges, so chmod cannot make a file read-only");
      return;
    }
  g_assert_cmpint (access (ro, W_OK), !=, 0);
  try_read_only (ro);
  try_read_only (sealed);

  /* no new project in a directory we cannot write, and nothing left */
  g_autoptr (GError) error = NULL;
  g_autofree char *fresh = g_build_filename (sealed_dir, "new.netloom", NULL);
  g_assert_null (nl_project_open (fresh, TRUE, &error));
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_READ_ONLY);
  g_assert_nonnull (strstr (error->message, fresh));
  g_assert_false (g_file_test (fresh, G_FILE_TEST_EXISTS));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  nl_fault_vfs_install ();
  /* the read-only test's child works in its parent's directory */
  const char *shared = g_test_subprocess () ? g_getenv ("NL_TEST_FAULTS_DIR") : NULL;
  fx.dir = shared ? g_strdup (shared) : g_dir_make_tmp ("netloom-faults-XXXXXX", NULL);
  g_assert_nonnull (fx.dir);
  /* before any thread starts */
  g_setenv ("NL_TEST_FAULTS_DIR", fx.dir, TRUE);
  fx.path = g_build_filename (fx.dir, "p.netloom", NULL);
  fx.base = g_build_filename (fx.dir, "base.netloom", NULL);
  g_autofree char *data = g_build_filename (fx.dir, "data", NULL);
  if (!shared)
    {
      g_assert_cmpint (g_mkdir (data, 0755), ==, 0);
      nl_test_write_idx_dataset (data, 96, 32);
    }
  fx.spec = g_strdup_printf ("mnist:%s", data);
  nl_test_tiny_train_config (&fx.cfg, fx.spec);
  fx.cfg.threads = 1;
  fx.net = nl_network_load_data (net_json, -1, NULL);
  g_assert_nonnull (fx.net);
  fx.cfg.epochs = 1;
  g_autoptr (GError) error = NULL;
  fx.checker = nl_trainer_new (fx.net, &fx.cfg, &error);
  g_assert_no_error (error);

  for (guint i = 0; i < G_N_ELEMENTS (ops); i++)
    {
      g_autofree char *name = g_strdup_printf ("/project-faults/%s", ops[i].name);
      g_test_add_data_func (name, &ops[i], test_op);
    }
  g_test_add_func ("/project-faults/read-only", test_read_only);
  int rc = g_test_run ();

  g_clear_pointer (&fx.checker, nl_trainer_free);
  g_clear_pointer (&fx.net, nl_network_free);
  nl_run_config_clear (&fx.cfg);
  if (!shared)
    nl_test_remove_tree (fx.dir);
  g_free (fx.spec);
  g_free (fx.base);
  g_free (fx.path);
  g_free (fx.dir);
  return rc;
}
