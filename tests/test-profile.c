/* test-profile.c — the profiler and system metrics: the CPU percent of a
 * pair of /proc stat lines against the hand figure, the trace's JSON read
 * back by the strict table reader with sums equal to hand sums, damaged
 * traces refused with one message, device spans from a fake device clock
 * (the CUDA events' path, which needs a GPU to run for real), and nl_session_profile_steps on a
 * running session (lockstep: the request lands at a known step) writing
 * profile/<node>/ms equal to the trace's own per-node means, beside the
 * system/ metrics. */
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "core/nl-system-stats.h"
#include "core/nl-trace-table.h"
#include "engine/graph/nl-device-timer.h"
#include "engine/session/nl-run-monitor.h"
#include "engine/session/nl-session.h"
#include "nl-test-util.h"

/* ---- system stats ---- */

static void
test_cpu_percent (void)
{
  /* a command name with spaces and ')' in it; utime 14th, stime 15th */
  const char *a = "1234 (my (odd) name) R 1 1234 1234 0 -1 4194304 500 0 0 0 300 40 0 0 20 0 9 0 100 1 2";
  const char *b = "1234 (my (odd) name) S 1 1234 1234 0 -1 4194304 500 0 0 0 420 70 0 0 20 0 9 0 100 1 2";
  NlCpuSample x, y;
  g_assert_true (nl_cpu_sample_parse (a, &x));
  g_assert_true (nl_cpu_sample_parse (b, &y));
  g_assert_cmpuint (x.ticks, ==, 340);
  g_assert_cmpuint (y.ticks, ==, 490);
  /* 150 ticks at 100 a second over 0.5 s: 1.5 s of CPU in 0.5 s, three cores busy */
  x.wall_us = 1000000;
  y.wall_us = 1500000;
  g_assert_cmpfloat_with_epsilon (nl_cpu_percent (&x, &y, 100), 300.0, 1e-9);
  /* no time passed, or a clock gone back: 0, never a division by zero */
  g_assert_cmpfloat (nl_cpu_percent (&x, &x, 100), ==, 0);
  g_assert_cmpfloat (nl_cpu_percent (&y, &x, 100), ==, 0);
  /* too few fields, no name */
  g_assert_false (nl_cpu_sample_parse ("1234 (x) R 1 2 3", &x));
  g_assert_false (nl_cpu_sample_parse ("1234 x R", &x));
  g_assert_false (nl_cpu_sample_parse (NULL, &x));
  /* this process: readable, resident memory above nothing */
  g_assert_true (nl_cpu_sample_now (&x));
  g_assert_cmpfloat (nl_rss_mb (), >, 0);
}

/* NVML is looked up once a process: each case in a child of its own */
static void
test_nvml (void)
{
  double util = -1, mem = -1;
  if (g_test_subprocess ())
    {
      if (!strcmp (g_getenv ("NETLOOM_NVML_LIBRARY"), NL_FAKE_NVML))
        {
          /* the stand-in's GPU 0: 42 %, 1.5 GiB; no GPU 1 */
          g_assert_true (nl_gpu_stats (0, &util, &mem));
          g_assert_cmpfloat (util, ==, 42);
          g_assert_cmpfloat (mem, ==, 1536);
          g_assert_false (nl_gpu_stats (1, &util, &mem));
        }
      else
        {
          /* no such library: no figures and nothing said */
          g_assert_false (nl_gpu_stats (0, &util, &mem));
          g_assert_cmpfloat (util, ==, -1);
        }
      g_assert_false (nl_gpu_stats (-1, &util, &mem));
      return;
    }
  g_setenv ("NETLOOM_NVML_LIBRARY", NL_FAKE_NVML, TRUE);
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_INHERIT_STDERR);
  g_test_trap_assert_passed ();
  g_setenv ("NETLOOM_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", TRUE);
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_INHERIT_STDERR);
  g_test_trap_assert_passed ();
}

/* ---- the trace and its table ---- */

static void
test_trace_round_trip (void)
{
  g_autoptr (NlTrace) t = nl_trace_new ();
  g_autoptr (GError) error = NULL;
  g_autoptr (NlTraceTable) table = NULL;
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autofree char *json = NULL;
  gint64 base = g_get_monotonic_time ();
  gsize len;
  const NlTraceRow *r;

  /* conv1: 3 + 5 ms; fc1 "x\"y": 1 ms twice; a loader span that is no op */
  nl_trace_add_op (t, "conv1", "Conv2D", NL_TRACE_PASS_FORWARD, FALSE, 1, base, base + 3000);
  nl_trace_add_op (t, "conv1", "Conv2D", NL_TRACE_PASS_BACKWARD, FALSE, 1, base + 3000, base + 8000);
  nl_trace_add_op (t, "fc1 \"x\\y\"", "Dense", NL_TRACE_PASS_FORWARD, FALSE, 2, base, base + 1000);
  nl_trace_add_op (t, "fc1 \"x\\y\"", "Dense", NL_TRACE_PASS_BACKWARD, FALSE, 2, base, base + 1000);
  nl_trace_add (t, NL_TRACE_CAT_LOADER, "batch", "batch", 1, base, base + 9000);
  json = nl_trace_to_json (t, &len);
  g_assert_true (json_parser_load_from_data (parser, json, (gssize) len, &error));
  g_assert_no_error (error);
  table = nl_trace_table_parse (json, len, "t.json", &error);
  g_assert_no_error (error);
  g_assert_cmpint (table->events, ==, 5);
  g_assert_cmpint (table->steps, ==, 2);
  g_assert_false (table->device);
  g_assert_cmpfloat_with_epsilon (table->total_ms, 10.0, 1e-9);
  g_assert_cmpuint (table->layers->len, ==, 2);
  r = &g_array_index (table->layers, NlTraceRow, 0);
  g_assert_cmpstr (r->name, ==, "conv1");
  g_assert_cmpstr (r->op, ==, "Conv2D");
  g_assert_cmpint (r->calls, ==, 2);
  g_assert_cmpfloat_with_epsilon (r->total_ms, 8.0, 1e-9);
  g_assert_cmpfloat_with_epsilon (r->mean_ms, 4.0, 1e-9);
  g_assert_cmpfloat_with_epsilon (r->share, 0.8, 1e-9);
  r = &g_array_index (table->layers, NlTraceRow, 1);
  g_assert_cmpstr (r->name, ==, "fc1 \"x\\y\"");
  g_assert_cmpfloat_with_epsilon (r->total_ms, 2.0, 1e-9);
  g_assert_cmpuint (table->ops->len, ==, 2);
  g_assert_cmpstr (g_array_index (table->ops, NlTraceRow, 1).name, ==, "Dense");
  g_assert_cmpint (g_array_index (table->ops, NlTraceRow, 1).calls, ==, 2);

  /* device spans stand in for the host's where there are any */
  nl_trace_add_op (t, "conv1", "Conv2D", NL_TRACE_PASS_FORWARD, TRUE, 1, base, base + 250);
  g_clear_pointer (&json, g_free);
  g_clear_pointer (&table, nl_trace_table_free);
  json = nl_trace_to_json (t, &len);
  table = nl_trace_table_parse (json, len, "t.json", &error);
  g_assert_no_error (error);
  g_assert_true (table->device);
  g_assert_cmpfloat_with_epsilon (table->total_ms, 0.25, 1e-9);
  g_assert_cmpuint (table->layers->len, ==, 1);
}

static void
test_trace_damaged (void)
{
  static const struct {
    const char *text, *why;
  } cases[] = {
    { "", "is not JSON" },
    { "{\"traceEvents\":[{\"ph\":\"X\"", "is not JSON" },
    { "[]", "traceEvents" },
    { "{\"traceEvents\":{}}", "traceEvents" },
    { "{\"traceEvents\":[1]}", "traceEvents[0]: not an object" },
    { "{\"traceEvents\":[{\"ph\":\"M\"},{\"name\":\"a\"}]}", "traceEvents[1]: no \"ph\"" },
    { "{\"traceEvents\":[{\"ph\":\"X\",\"ts\":0,\"dur\":1,\"pid\":1,\"tid\":1}]}", "no \"name\"" },
    { "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a\",\"ts\":\"0\",\"dur\":1,\"pid\":1,\"tid\":1}]}", "\"ts\"" },
    { "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a\",\"ts\":0,\"dur\":-1,\"pid\":1,\"tid\":1}]}", "\"dur\"" },
    { "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a\",\"ts\":0,\"dur\":1,\"tid\":1}]}", "\"pid\"" },
    { "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a\",\"cat\":7,\"ts\":0,\"dur\":1,\"pid\":1,\"tid\":1}]}", "\"cat\"" },
    { "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a\",\"cat\":\"op\",\"ts\":0,\"dur\":1,\"pid\":1,\"tid\":1}]}",
      "\"args\"" },
    { "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a\",\"cat\":\"op\",\"ts\":0,\"dur\":1,\"pid\":1,\"tid\":1,"
      "\"args\":{\"node\":\"a\",\"op\":\"Dense\",\"pass\":\"sideways\"}}]}", "\"pass\"" },
    { "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a\",\"cat\":\"device\",\"ts\":0,\"dur\":1,\"pid\":1,\"tid\":1,"
      "\"args\":{\"op\":\"Dense\",\"pass\":\"forward\"}}]}", "\"node\"" },
    { "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a\",\"cat\":\"op\",\"ts\":0,\"dur\":1,\"pid\":1,\"tid\":1,"
      "\"args\":{\"node\":\"a\",\"op\":\"Dense\",\"pass\":\"forward\",\"step\":1.5}}]}", "\"step\"" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (NlTraceTable) t = nl_trace_table_parse (cases[i].text, strlen (cases[i].text), "bad.json", &error);
      g_assert_null (t);
      g_assert_error (error, NL_TRACE_TABLE_ERROR, NL_TRACE_TABLE_ERROR_INVALID);
      /* one message, naming the file and what is wrong */
      g_assert_true (g_str_has_prefix (error->message, "bad.json"));
      g_assert_nonnull (strstr (error->message, cases[i].why));
      g_assert_null (strchr (error->message, '\n'));
    }
  {
    g_autoptr (GError) error = NULL;
    g_assert_null (nl_trace_table_load ("/nonexistent/trace.json", &error));
    g_assert_error (error, NL_TRACE_TABLE_ERROR, NL_TRACE_TABLE_ERROR_READ);
    g_assert_nonnull (strstr (error->message, "/nonexistent/trace.json"));
  }
}

/* ---- device time: a backend whose marks read a fake device clock that
 * moves 1.5 ms per mark (CUDA events stand there on a GPU) ---- */

static gint64 fake_clock_us, fake_live;

static void *
fake_mark (NlBackend *b, GError **error)
{
  gint64 *m = g_new (gint64, 1);
  (void) b, (void) error;
  *m = fake_clock_us;
  fake_clock_us += 1500;
  fake_live++;
  return m;
}

static gboolean
fake_elapsed (NlBackend *b, void *from, void *to, float *ms, GError **error)
{
  (void) b, (void) error;
  *ms = (float) ((*(gint64 *) to - *(gint64 *) from) / 1e3);
  return TRUE;
}

static void
fake_free (NlBackend *b, void *mark)
{
  (void) b;
  g_free (mark);
  fake_live--;
}

static void
test_device_timer (void)
{
  NlBackendInterface iface = *nl_backend_cpu ()->iface;
  NlBackend fake = { &iface, nl_backend_cpu ()->device, NULL };
  g_autoptr (NlTrace) t = nl_trace_new ();
  NlDeviceTimer *timer;
  const NlTraceEvent *e;
  void *m;
  guint n;

  /* the CPU has no clock of its own: no timer */
  g_assert_null (nl_device_timer_new (nl_backend_cpu ()));
  iface.mark = fake_mark;
  iface.mark_elapsed = fake_elapsed;
  iface.mark_free = fake_free;
  timer = nl_device_timer_new (&fake);
  g_assert_nonnull (timer);
  /* base at 0, conv1 forward from 1.5 to 3 ms, fc1 backward from 4.5 to 6 */
  m = nl_device_timer_begin (timer);
  nl_device_timer_end (timer, m, "conv1", "Conv2D", NL_TRACE_PASS_FORWARD, 7);
  m = nl_device_timer_begin (timer);
  nl_device_timer_end (timer, m, "fc1", "Dense", NL_TRACE_PASS_BACKWARD, 7);
  g_assert_cmpint (fake_live, ==, 5);
  nl_device_timer_flush (timer, t);
  g_assert_cmpint (fake_live, ==, 0);
  e = nl_trace_events (t, &n);
  g_assert_cmpuint (n, ==, 2);
  g_assert_cmpstr (e[0].cat, ==, NL_TRACE_CAT_DEVICE);
  g_assert_cmpstr (e[0].node, ==, "conv1");
  g_assert_cmpint (e[0].pass, ==, NL_TRACE_PASS_FORWARD);
  g_assert_cmpint (e[0].arg, ==, 7);
  g_assert_cmpint (e[0].dur, ==, 1500);
  g_assert_cmpint (e[1].ts - e[0].ts, ==, 3000);
  g_assert_cmpint (e[1].dur, ==, 1500);
  g_assert_cmpint (e[0].tid, ==, e[1].tid);
  /* marks of a step not traced are freed, not read */
  m = nl_device_timer_begin (timer);
  nl_device_timer_end (timer, m, "conv1", "Conv2D", NL_TRACE_PASS_FORWARD, 8);
  nl_device_timer_free (timer);
  g_assert_cmpint (fake_live, ==, 0);
  g_assert_cmpuint (nl_trace_events (t, &n) && n == 2, ==, TRUE);
}

/* ---- nl_session_profile_steps on a running session ---- */

static char *data_dir;

static void
write_idx (const char *name, gboolean images, int n, int side)
{
  g_autofree char *path = g_build_filename (data_dir, name, NULL);
  g_autoptr (GString) s = g_string_new (NULL);
  guint8 head[16] = { 0, 0, 8, images ? 3 : 1 };
  guint32 dims[3] = { GUINT32_TO_BE (n), GUINT32_TO_BE (side), GUINT32_TO_BE (side) };
  memcpy (head + 4, dims, images ? 12 : 4);
  g_string_append_len (s, (char *) head, images ? 16 : 8);
  for (int i = 0; i < n; i++)
    {
      int label = (i * 7 + 3) % 10;
      for (int px = 0; images && px < side * side; px++)
        g_string_append_c (s, (char) ((px * 37 + i) % 90 + (px / side / 2 == label ? 150 : 0)));
      if (!images)
        g_string_append_c (s, (char) label);
    }
  g_assert_true (g_file_set_contents (path, s->str, s->len, NULL));
}

static const char *net_json =
  "{\"format\":\"netloom.network\",\"version\":1,\"name\":\"tiny\",\"nodes\":["
  "{\"id\":\"data\",\"op\":\"Input\"},{\"id\":\"flat\",\"op\":\"Flatten\"},"
  "{\"id\":\"fc1\",\"op\":\"Dense\",\"params\":{\"units\":16}},"
  "{\"id\":\"act\",\"op\":\"Activation\"},{\"id\":\"fc2\",\"op\":\"Dense\",\"params\":{\"units\":10}}],"
  "\"edges\":[\"data -> flat\",\"flat -> fc1\",\"fc1 -> act\",\"act -> fc2\"]}";

typedef struct {
  NlSession *s;
  GMainLoop *loop;
  const char *trace_path;
  gboolean asked;
} Watch;

/* the first BATCH (step 1): profile 3 steps. The worker waits until this
 * returns (lockstep), and takes the request after its next step: the
 * window is steps 3 to 5 */
static void
on_event (NlSession *s, const NlSessionEvent *e, gpointer user)
{
  Watch *w = user;
  if (e->kind == NL_SESSION_EVENT_BATCH && !w->asked)
    {
      g_assert_cmpint (e->batch, ==, 1);
      w->asked = TRUE;
      nl_session_profile_steps (s, 3, w->trace_path);
    }
  if (e->kind == NL_SESSION_EVENT_ERROR)
    g_error ("the run failed: %s", e->message);
  if (e->kind == NL_SESSION_EVENT_FINISHED)
    g_main_loop_quit (w->loop);
}

static gboolean
on_wakeup (gpointer data)
{
  Watch *w = data;
  nl_session_drain (w->s, on_event, w);
  return G_SOURCE_REMOVE;
}

/* per node: the trace's op time (forward + backward) in ms, and the steps
 * its op events name */
static void
trace_sums (const char *path, GHashTable *ms, GHashTable *steps)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) error = NULL;
  JsonArray *events;
  g_assert_true (json_parser_load_from_file (parser, path, &error));
  g_assert_no_error (error);
  events = json_object_get_array_member (json_node_get_object (json_parser_get_root (parser)), "traceEvents");
  for (guint i = 0; i < json_array_get_length (events); i++)
    {
      JsonObject *e = json_array_get_object_element (events, i), *args;
      const char *node;
      double *sum;
      if (g_strcmp0 (json_object_get_string_member_with_default (e, "cat", ""), "op"))
        continue;
      args = json_object_get_object_member (e, "args");
      node = json_object_get_string_member (args, "node");
      if (!(sum = g_hash_table_lookup (ms, node)))
        g_hash_table_insert (ms, g_strdup (node), sum = g_new0 (double, 1));
      *sum += json_object_get_double_member (e, "dur") / 1e3;
      g_hash_table_add (steps, GINT_TO_POINTER ((int) json_object_get_int_member (args, "step")));
    }
}

static void
test_session_profile (void)
{
  g_autofree char *dir = g_dir_make_tmp ("netloom-profile-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "p.netloom", NULL);
  g_autofree char *trace = g_build_filename (dir, "trace.json", NULL);
  g_autofree char *spec = g_strdup_printf ("mnist:%s", data_dir);
  g_autoptr (GError) error = NULL;
  g_autoptr (NlProject) p = nl_project_open (path, TRUE, &error);
  g_autoptr (NlNetwork) net = nl_network_load_data (net_json, -1, &error);
  g_autoptr (GHashTable) ms = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr (GHashTable) steps = g_hash_table_new (NULL, NULL);
  g_autoptr (GArray) rows = NULL;
  g_auto (NlRunConfig) cfg = { 0 };
  Watch w = { .loop = g_main_loop_new (NULL, FALSE), .trace_path = trace };
  const char *nodes[] = { "data", "flat", "fc1", "act", "fc2" };
  int n_profile = 0, n_cpu = 0, n_rss = 0, n_wait = 0;
  gint64 run;

  g_assert_no_error (error);
  nl_run_config_init (&cfg);
  nl_run_config_set_text (&cfg.dataset, spec);
  cfg.epochs = 1;
  cfg.batch_size = 32;
  cfg.threads = 1;
  cfg.workers = 2;
  w.s = nl_session_new_train (p, "profiled", net, &cfg, &error);
  g_assert_no_error (error);
  nl_session_set_wakeup (w.s, NULL, on_wakeup, &w);
  g_assert_true (nl_session_start (w.s, &error));
  g_main_loop_run (w.loop);
  nl_session_wait (w.s);
  g_assert_cmpstr (nl_session_get_outcome (w.s), ==, "finished");
  run = nl_session_get_run (w.s);
  g_clear_pointer (&w.s, nl_session_free);
  g_main_loop_unref (w.loop);

  /* the trace holds steps 3 to 5 exactly */
  trace_sums (trace, ms, steps);
  g_assert_cmpuint (g_hash_table_size (steps), ==, 3);
  for (int s = 3; s <= 5; s++)
    g_assert_true (g_hash_table_contains (steps, GINT_TO_POINTER (s)));
  /* profile/<node>/ms at step 5: the node's op time in the trace over its 3 steps */
  rows = nl_project_get_metrics (p, run, NULL, 0, NULL, &error);
  g_assert_no_error (error);
  for (guint i = 0; i < rows->len; i++)
    {
      const NlMetricRow *r = &g_array_index (rows, NlMetricRow, i);
      if (g_str_has_prefix (r->name, "profile/") || g_str_has_prefix (r->name, "system/"))
        g_assert_cmpstr (r->split, ==, "train");
      if (g_str_has_prefix (r->name, "profile/"))
        {
          g_auto (GStrv) parts = g_strsplit (r->name, "/", -1);
          double *sum = g_hash_table_lookup (ms, parts[1]);
          g_assert_nonnull (sum);
          g_assert_cmpint (r->step, ==, 5);
          g_assert_cmpfloat_with_epsilon (r->value, *sum / 3, 1e-6);
          n_profile++;
        }
      else if (!strcmp (r->name, "system/cpu_percent"))
        {
          g_assert_cmpfloat (r->value, >=, 0);
          g_assert_cmpfloat (r->value, <=, 100.0 * g_get_num_processors ());
          n_cpu++;
        }
      else if (!strcmp (r->name, "system/rss_mb"))
        {
          g_assert_cmpfloat (r->value, >, 0);
          n_rss++;
        }
      else if (!strcmp (r->name, "system/input_wait_ms"))
        {
          g_assert_cmpfloat (r->value, >=, 0);
          n_wait++;
        }
      else
        g_assert_false (g_str_has_prefix (r->name, "system/gpu"));  /* a CPU run */
    }
  g_assert_cmpint (n_profile, ==, g_hash_table_size (ms));
  for (gsize i = 0; i < G_N_ELEMENTS (nodes); i++)
    g_assert_true (g_hash_table_contains (ms, nodes[i]));
  /* after the first step and at the end at least */
  g_assert_cmpint (n_cpu, >=, 2);
  g_assert_cmpint (n_rss, ==, n_cpu);
  g_assert_cmpint (n_wait, ==, n_cpu);
  g_clear_pointer (&p, nl_project_close);
  nl_test_remove_tree (dir);
}

/* the monitor's per-node means from a trace: device spans first */
static void
test_node_ms (void)
{
  g_autoptr (NlTrace) t = nl_trace_new ();
  g_autofree const char **nodes = NULL;
  g_autofree double *ms = NULL;
  int n;
  nl_trace_add_op (t, "a", "Dense", NL_TRACE_PASS_FORWARD, FALSE, 1, 0, 4000);
  nl_trace_add_op (t, "b", "Dense", NL_TRACE_PASS_FORWARD, FALSE, 1, 0, 1000);
  nl_trace_add_op (t, "a", "Dense", NL_TRACE_PASS_BACKWARD, FALSE, 2, 0, 2000);
  n = nl_run_monitor_node_ms (t, 2, &nodes, &ms);
  g_assert_cmpint (n, ==, 2);
  g_assert_cmpstr (nodes[0], ==, "a");
  g_assert_cmpfloat_with_epsilon (ms[0], 3.0, 1e-12);
  g_assert_cmpfloat_with_epsilon (ms[1], 0.5, 1e-12);
  g_clear_pointer (&nodes, g_free);
  g_clear_pointer (&ms, g_free);
  nl_trace_add_op (t, "b", "Dense", NL_TRACE_PASS_FORWARD, TRUE, 1, 0, 500);
  n = nl_run_monitor_node_ms (t, 1, &nodes, &ms);
  g_assert_cmpint (n, ==, 1);
  g_assert_cmpstr (nodes[0], ==, "b");
  g_assert_cmpfloat_with_epsilon (ms[0], 0.5, 1e-12);
}

int
main (int argc, char **argv)
{
  int status;
  g_test_init (&argc, &argv, NULL);
  g_setenv ("NETLOOM_TEST_SESSION_LOCKSTEP", "1", TRUE);
  g_setenv ("NETLOOM_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", FALSE);
  data_dir = g_dir_make_tmp ("netloom-profile-data-XXXXXX", NULL);
  write_idx ("train-images-idx3-ubyte", TRUE, 320, 20);
  write_idx ("train-labels-idx1-ubyte", FALSE, 320, 20);
  write_idx ("t10k-images-idx3-ubyte", TRUE, 100, 20);
  write_idx ("t10k-labels-idx1-ubyte", FALSE, 100, 20);
  g_test_add_func ("/profile/cpu-percent", test_cpu_percent);
  g_test_add_func ("/profile/nvml", test_nvml);
  g_test_add_func ("/profile/trace-round-trip", test_trace_round_trip);
  g_test_add_func ("/profile/trace-damaged", test_trace_damaged);
  g_test_add_func ("/profile/node-ms", test_node_ms);
  g_test_add_func ("/profile/device-timer", test_device_timer);
  g_test_add_func ("/profile/session", test_session_profile);
  status = g_test_run ();
  nl_test_remove_tree (data_dir);
  return status;
}
