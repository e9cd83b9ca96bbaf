/* nl-project.h — the project store: one SQLite file (*.netloom) holding
 * networks, pipelines, runs, metrics, checkpoints, tags and notes.
 *
 * The file is in WAL mode, so one writer (a training process) and any number
 * of readers (a GUI, `netloom-cli watch`) work at once without blocking each
 * other. Every call is thread-safe per NlProject (one connection behind a
 * mutex) and every write is one transaction: after a crash a row is either
 * fully there or absent. projects/ knows networks only as JSON text.
 *
 * Ids are > 0; 0 means "none" in fields and "error" in return values.
 * Times are Unix time in seconds (REAL); 0 means "not set". */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define NL_PROJECT_ERROR (nl_project_error_quark ())
GQuark nl_project_error_quark (void);
typedef enum {
  NL_PROJECT_ERROR_NOT_PROJECT, /* not SQLite, or SQLite but not a netloom project */
  NL_PROJECT_ERROR_NEWER,       /* written by a newer netloom (schema too new) */
  NL_PROJECT_ERROR_EXISTS,      /* refusing to overwrite an existing file */
  NL_PROJECT_ERROR_NOT_FOUND,   /* no such file, network, pipeline, run or checkpoint */
  NL_PROJECT_ERROR_INVALID,     /* bad argument: unknown status or split, bad JSON */
  NL_PROJECT_ERROR_READ_ONLY,   /* the file (or its directory) cannot be written */
  NL_PROJECT_ERROR_BUSY,        /* still locked by another process after the busy timeout */
  NL_PROJECT_ERROR_CORRUPT,     /* integrity check failed or SQLite reports corruption */
  NL_PROJECT_ERROR_FULL,        /* disk full */
  NL_PROJECT_ERROR_FAILED,      /* any other SQLite error (the message has SQLite's text) */
  NL_PROJECT_ERROR_TAKEN,       /* a held run was taken over by another process (nl_project_hold_run) */
} NlProjectErrorCode;

/* The schema this netloom writes; older files are migrated on open. */
#define NL_PROJECT_SCHEMA_VERSION 6
/* PRAGMA application_id of every project file: 'NLOM'. */
#define NL_PROJECT_APPLICATION_ID 0x4E4C4F4D

typedef struct NlProject NlProject;

/* Opens PATH. With create, a missing (or empty) file becomes a new project.
 * An older schema is migrated after a backup to PATH.bak-vN (N the old
 * version). A newer schema, a SQLite file of another program or a file that
 * is not SQLite at all are refused without being modified. Runs left
 * 'running' or 'paused' whose heartbeat (nl_project_heartbeat) is older
 * than NL_PROJECT_STALE_BEATS heartbeat intervals are marked 'interrupted',
 * whatever host trained them (runs stored before heartbeats: when their
 * process on this host is gone). A file that
 * cannot be written opens read-only: reads work, writes fail with
 * NL_PROJECT_ERROR_READ_ONLY. */
NlProject *nl_project_open (const char *path, gboolean create, GError **error);
void nl_project_close (NlProject *p);
const char *nl_project_path (NlProject *p);
int nl_project_schema_version (NlProject *p);
gboolean nl_project_is_read_only (NlProject *p);
/* Changes whenever another connection (another process, or another
 * NlProject on the same file) commits; a watcher polls it cheaply. */
gint64 nl_project_data_version (NlProject *p);
/* PRAGMA integrity_check and foreign_key_check; the error lists the problems. */
gboolean nl_project_check (NlProject *p, GError **error);
/* A compacted copy of the whole project at PATH (refuses an existing file;
 * removes a partial copy on failure). The open project is unchanged. */
gboolean nl_project_save_copy (NlProject *p, const char *path, GError **error);
/* A new project at PATH (refuses an existing file): the Fashion-MNIST
 * pipeline and the mlp, lenet and resnet-small networks. */
gboolean nl_project_create_sample (const char *path, GError **error);

/* ---- networks: every save is a new version of NAME (1, 2, ...) ---- */
typedef struct {
  gint64 id;
  char *name;
  int version;       /* the latest, or this row's in list_network_versions */
  int n_versions;
  double created;    /* of that version */
} NlNetworkInfo;
void nl_network_info_free (NlNetworkInfo *n);

/* json must be a JSON object. Returns the new row's id. */
gint64 nl_project_save_network (NlProject *p, const char *name, const char *json, GError **error);
/* version 0: the latest. */
char *nl_project_load_network (NlProject *p, const char *name, int version, GError **error);
/* NlNetworkInfo*, latest version of each name, by name. */
GPtrArray *nl_project_list_networks (NlProject *p, GError **error);
/* NlNetworkInfo*, every version of NAME, oldest first. */
GPtrArray *nl_project_list_network_versions (NlProject *p, const char *name, GError **error);
/* Deletes every version of NAME; runs keep their snapshots. */
gboolean nl_project_delete_network (NlProject *p, const char *name, GError **error);

/* ---- pipelines: one row per name; saving an existing name updates it ---- */
typedef struct {
  gint64 id;
  char *name;
  char *dataset_spec;  /* "fashion-mnist", "csv:FILE", ... (nl-dataset.h) */
  char *transforms;    /* "random-crop:28:4,flip" (nl-transform.h); NULL = none */
  double split;        /* validation fraction for datasets without a test set */
  int batch_size;
  int workers;
  char *extra_json;    /* anything else, a JSON object or NULL */
  double created;
} NlPipelineInfo;
void nl_pipeline_info_free (NlPipelineInfo *pl);
/* The snapshot stored in runs.pipeline_json, and back. */
char *nl_pipeline_info_to_json (const NlPipelineInfo *pl);
NlPipelineInfo *nl_pipeline_info_from_json (const char *json, GError **error);

/* Uses pl->name .. pl->extra_json (id and created are ignored). Returns the id. */
gint64 nl_project_save_pipeline (NlProject *p, const NlPipelineInfo *pl, GError **error);
NlPipelineInfo *nl_project_load_pipeline (NlProject *p, const char *name, GError **error);
/* NlPipelineInfo*, by name. */
GPtrArray *nl_project_list_pipelines (NlProject *p, GError **error);
gboolean nl_project_delete_pipeline (NlProject *p, const char *name, GError **error);

/* ---- runs ---- */
typedef struct {
  gint64 id;
  char *name;
  gint64 parent_run, parent_checkpoint;   /* the run and checkpoint forked from */
  char *network_name, *network_json, *pipeline_json, *hparams_json;
  gint64 seed;
  char *device, *status, *error, *host;
  gint64 pid;
  double created, started, finished;
  int epochs_done;
  gint64 sweep;         /* the sweep it is a trial of (0: none) */
  int sweep_trial;      /* its trial number in that sweep, from 0 */
  char *sweep_params;   /* the trial's values, a JSON object (nl-sweep-space.h) */
  double heartbeat;     /* when its trainer last said it was alive (0: never) */
} NlRunInfo;
void nl_run_info_free (NlRunInfo *r);

/* network_json is required. status NULL means "queued"; for "running" the
 * host, pid and start time of this process are filled in when not given.
 * created 0 means now. id and epochs_done are ignored. Returns the id. */
gint64 nl_project_create_run (NlProject *p, const NlRunInfo *info, GError **error);
/* A sweep's trial numbers are unique: creating a second run with the same
 * (sweep, sweep_trial) fails. */
/* status: queued, running, paused, finished, failed, stopped, interrupted, pruned.
 *   running   sets started (first time only), host and pid; clears finished and error
 *   paused    changes nothing else
 *   queued    clears started, finished, error, host and pid
 *   finished, failed, stopped, interrupted, pruned  set finished = now and
 *             error = error_message (may be NULL) */
gboolean nl_project_set_run_status (NlProject *p, gint64 run, const char *status,
                                    const char *error_message, GError **error);
gboolean nl_project_set_run_epochs (NlProject *p, gint64 run, int epochs_done, GError **error);

/* The trainer of a running run says it is alive: heartbeat = now (set by
 * status 'running' too). A metric writer with a run does it every
 * nl_project_heartbeat_interval () seconds; a run whose heartbeat is
 * NL_PROJECT_STALE_BEATS intervals old is taken for dead at the next open. */
gboolean nl_project_heartbeat (NlProject *p, gint64 run, GError **error);
#define NL_PROJECT_STALE_BEATS 3
/* 5 s, or NETLOOM_HEARTBEAT_INTERVAL (seconds, > 0) from the environment
 * (tests; every process of a project must see the same). */
double nl_project_heartbeat_interval (void);

/* A trainer's hold on its run: status 'running' (as nl_project_set_run_status)
 * and, from now on, every write of this NlProject to RUN (heartbeat, status,
 * epochs, metrics, checkpoints) checks in its own transaction that the run
 * is still this process's: a run marked 'interrupted' for the trainer's
 * silence (stopped with Ctrl-Z) that nobody touched since is taken back
 * (status 'running', a note "stopped for N s; it goes on"); one another
 * process took over (resumed) or changed is lost for good: those writes
 * fail with NL_PROJECT_ERROR_TAKEN and write nothing. */
gboolean nl_project_hold_run (NlProject *p, gint64 run, GError **error);
/* Without waiting on SQLite (a training step may ask): TRUE, with ERROR
 * saying why, once the held RUN was lost. reclaimed (may be NULL): the
 * seconds of silence of a take-back not reported yet, else 0. */
gboolean nl_project_run_taken (NlProject *p, gint64 run, double *reclaimed, GError **error);
/* The trainer is done with RUN: its writes are unchecked again. */
void nl_project_release_run (NlProject *p, gint64 run);
NlRunInfo *nl_project_get_run (NlProject *p, gint64 run, GError **error);
/* NlRunInfo*, by id. */
GPtrArray *nl_project_list_runs (NlProject *p, GError **error);
/* NlRunInfo*, the trials of SWEEP, by id. */
GPtrArray *nl_project_list_sweep_runs (NlProject *p, gint64 sweep, GError **error);
gboolean nl_project_rename_run (NlProject *p, gint64 run, const char *name, GError **error);
/* Deletes the run with its metrics, checkpoints, tags, notes and vocabulary; runs forked
 * from it keep their snapshots and lose the parent link. */
gboolean nl_project_delete_run (NlProject *p, gint64 run, GError **error);

gboolean nl_project_add_tag (NlProject *p, gint64 run, const char *tag, GError **error);
gboolean nl_project_remove_tag (NlProject *p, gint64 run, const char *tag, GError **error);
/* The tags of RUN, sorted; run 0: every tag used in the project. NULL-terminated. */
char **nl_project_list_tags (NlProject *p, gint64 run, GError **error);

typedef struct {
  gint64 id, run;
  char *text;
  double created;
} NlNote;
void nl_note_free (NlNote *n);
gint64 nl_project_add_note (NlProject *p, gint64 run, const char *text, GError **error);
/* NlNote*, oldest first. */
GPtrArray *nl_project_list_notes (NlProject *p, gint64 run, GError **error);
gboolean nl_project_delete_note (NlProject *p, gint64 note, GError **error);

/* ---- a text run's vocabulary (schema 6): the JSON nl_vocab_to_json
 * wrote, stored before the run's first step, deleted with the run ---- */
/* Stores (or replaces) RUN's vocabulary; a run that does not exist is
 * NL_PROJECT_ERROR_NOT_FOUND, an empty text NL_PROJECT_ERROR_INVALID. */
gboolean nl_project_set_run_vocab (NlProject *p, gint64 run, const char *json, GError **error);
/* RUN's vocabulary (g_free), or NULL without an error when it has none. */
char *nl_project_get_run_vocab (NlProject *p, gint64 run, GError **error);

/* ---- sweeps: a search over run settings; its trials are runs ---- */
typedef struct {
  gint64 id;
  char *name;
  char *network_name, *network_json;  /* the snapshot each trial starts from */
  char *hparams_json;                 /* the base run settings (nl-run-config.h) */
  char *device;
  char *space;                        /* "lr=log:1e-4:1e-1,..." (nl-sweep-space.h) */
  char *strategy;                     /* a strategy name (engine/sweep/nl-sweep-strategy.h) */
  int trials;                         /* how many trials the sweep runs */
  char *metric;                       /* test_accuracy, train_accuracy, train_loss */
  gboolean maximize;
  char *prune;                        /* "asha[:eta=3,min_epochs=1]", or NULL */
  int parallel;                       /* trials at once */
  gint64 seed;
  char *status;                       /* running, finished, stopped */
  double created, finished;
} NlSweepInfo;
void nl_sweep_info_free (NlSweepInfo *s);

/* Needs network_json, hparams_json, space, strategy, metric and trials >= 1;
 * status NULL is running. Returns the id. */
gint64 nl_project_create_sweep (NlProject *p, const NlSweepInfo *info, GError **error);
NlSweepInfo *nl_project_get_sweep (NlProject *p, gint64 sweep, GError **error);
/* NlSweepInfo*, by id. */
GPtrArray *nl_project_list_sweeps (NlProject *p, GError **error);
/* running, finished or stopped; finished and stopped set finished = now. */
gboolean nl_project_set_sweep_status (NlProject *p, gint64 sweep, const char *status, GError **error);

/* ---- metrics ---- */
typedef struct {
  gint64 run, step;
  int epoch;
  const char *split;  /* "train", "val" or "test" */
  const char *name;   /* "loss", "accuracy", "lr", ... */
  double value;       /* NaN is stored as NULL and read back as NaN */
  double wall;        /* Unix time; 0 means now */
} NlMetricPoint;

/* A stored metric. split and name are interned strings (g_intern_string):
 * never freed, so a GArray of rows needs no element cleanup. */
typedef struct {
  gint64 rowid, run, step;
  int epoch;
  const char *split, *name;
  double value, wall;
} NlMetricRow;

/* All points in one transaction: all are stored or none. */
gboolean nl_project_add_metrics (NlProject *p, const NlMetricPoint *points, int n, GError **error);
/* NlMetricRow of RUN (0: every run) named NAME (NULL: every name) with
 * rowid > after_rowid, by rowid. Rowids only grow (never reused) and a
 * batch becomes visible all at once, so a watcher polls with after_rowid =
 * the last_rowid of its previous call and never misses or repeats a row.
 * last_rowid (may be NULL) receives the largest rowid returned, or
 * after_rowid when nothing is new. */
GArray *nl_project_get_metrics (NlProject *p, gint64 run, const char *name, gint64 after_rowid,
                                gint64 *last_rowid, GError **error);
/* Smallest and largest value and the value at the last step (the latest
 * written on ties) of NAME in RUN (split NULL: any split). NaN for each
 * when there is no such point. Any output may be NULL. Reads a summary
 * kept with the metrics: constant time however long the run. */
gboolean nl_project_metric_summary (NlProject *p, gint64 run, const char *name, const char *split,
                                    double *best_min, double *best_max, double *last, GError **error);

/* Deletes RUN's metrics and layer histograms of steps after STEP (what a resumed run trains
 * again) and brings its summaries up to date, in one transaction. */
gboolean nl_project_truncate_metrics (NlProject *p, gint64 run, gint64 step, GError **error);

/* One metric of a run, for run tables. name and split are interned. */
typedef struct {
  const char *name, *split;
  double min, max, last;   /* NaN when there is no value (all NaN) */
  gint64 last_step;
  gint64 count;            /* points, NaN ones included */
} NlMetricSummary;
/* NlMetricSummary of every (name, split) of RUN, by name then split. */
GArray *nl_project_list_metric_summaries (NlProject *p, gint64 run, GError **error);

/* ---- checkpoints ---- */
typedef struct {
  gint64 id, run;
  int epoch;
  gint64 step;
  gint64 size;               /* bytes of the blob */
  const char *metric_name;   /* interned, or NULL */
  double metric_value;       /* NaN when none */
  gboolean is_best;
  gboolean is_interval;      /* taken by time inside an epoch (nl_project_add_interval_checkpoint) */
  double created;
} NlCheckpointInfo;

/* Stores BLOB (the safetensors bytes) and, in the same transaction, marks
 * the run's best checkpoint by metric_name (the one with the highest value
 * when higher_is_better, else the lowest; the earliest on ties; only
 * checkpoints with that metric name compete; metric_name NULL leaves the
 * best flag alone) and, with keep_last > 0, deletes the run's checkpoints
 * that are neither among the keep_last newest, nor best, nor forked from.
 * The run's epochs_done becomes epoch when that is more, and the run's
 * interval checkpoint, now older than this one, goes too (unless forked
 * from), in the same transaction. Returns the id. Blobs are limited to
 * SQLite's maximum (1 GB by default). */
gint64 nl_project_add_checkpoint (NlProject *p, gint64 run, int epoch, gint64 step,
                                  const void *blob, gsize size, const char *metric_name,
                                  double metric_value, gboolean higher_is_better, int keep_last,
                                  GError **error);
/* A checkpoint by time, inside an epoch (epoch: epochs done). It replaces
 * the run's previous interval checkpoint in the same transaction (that one
 * is kept only when forked from): a run has at most one. It never counts
 * as best, nor towards keep_last, nor as "a checkpoint of epoch N". */
gint64 nl_project_add_interval_checkpoint (NlProject *p, gint64 run, int epoch, gint64 step, const void *blob,
                                           gsize size, GError **error);
/* run, epoch, step may be NULL. */
GBytes *nl_project_load_checkpoint (NlProject *p, gint64 checkpoint, gint64 *run, int *epoch,
                                    gint64 *step, GError **error);
/* which: "best", "last" (the newest) or an epoch number (the newest
 * checkpoint of that epoch). Returns the id, or 0 with an error. */
gint64 nl_project_find_checkpoint (NlProject *p, gint64 run, const char *which, GError **error);
/* NlCheckpointInfo of RUN, oldest first (no blobs are read). */
GArray *nl_project_list_checkpoints (NlProject *p, gint64 run, GError **error);
gboolean nl_project_delete_checkpoint (NlProject *p, gint64 checkpoint, GError **error);

/* ---- INT8 models (engine/session/nl-run-quantize.h) ----
 * A quantized model of a run: the blob (format "netloom.int8": the source
 * checkpoint's fp32 weights and the calibration table) and what was
 * measured when it was made. Deleting the run or its source checkpoint
 * deletes it. */
typedef struct {
  gint64 id, run, checkpoint;  /* checkpoint: the fp32 one it was made from */
  int epoch;
  const char *method;          /* interned: "naive", "entropy" */
  int calibration_samples;
  double fp32_test_acc, int8_test_acc, fp32_images_per_s, int8_images_per_s; /* NaN when unknown */
  gint64 size;                 /* bytes of the blob */
  double created;
} NlInt8ModelInfo;

/* Stores it in one transaction; info->id and info->size are ignored. */
gint64 nl_project_add_int8_model (NlProject *p, const NlInt8ModelInfo *info, const void *blob, gsize size,
                                  GError **error);
/* run may be NULL. */
GBytes *nl_project_load_int8_model (NlProject *p, gint64 id, gint64 *run, GError **error);
/* NlInt8ModelInfo of RUN, oldest first (no blobs are read). */
GArray *nl_project_list_int8_models (NlProject *p, gint64 run, GError **error);
/* The newest INT8 model of RUN (which NULL) or the newest made from the
 * checkpoint `which` names ("best", "last", an epoch). 0 with an error
 * naming the run when there is none ("run 3 has no INT8 model: run
 * netloom-cli quantize first"). */
gint64 nl_project_find_int8_model (NlProject *p, gint64 run, const char *which, GError **error);
gboolean nl_project_delete_int8_model (NlProject *p, gint64 id, GError **error);

/* ---- metric writer: batches metrics off the training thread ----
 * nl_metric_writer_add copies the point and returns at once; a background
 * thread writes what has queued up in one transaction every flush_ms or as
 * soon as max_rows are waiting. A failed write (disk full, read-only, locked
 * beyond the busy timeout, a run that does not exist) drops that batch, and
 * a point with a bad split or no name is dropped alone; the first error is
 * kept and returned, with the number of rows lost, by the next flush or
 * free (once). The project must outlive the writer. */
typedef struct NlMetricWriter NlMetricWriter;
/* flush_ms 0: 250; max_rows 0: 512. */
NlMetricWriter *nl_metric_writer_new (NlProject *p, guint flush_ms, guint max_rows);
/* From now on the writer's thread also beats RUN's heartbeat
 * (nl_project_heartbeat) every nl_project_heartbeat_interval (), off the
 * training thread; 0 stops. A failed beat is only logged. */
void nl_metric_writer_set_heartbeat (NlMetricWriter *w, gint64 run);
void nl_metric_writer_add (NlMetricWriter *w, const NlMetricPoint *pt);
/* Writes everything added so far before returning. */
gboolean nl_metric_writer_flush (NlMetricWriter *w, GError **error);
/* TRUE: returns once the writer is idle (no write or heartbeat under way)
 * and keeps it so, points still queueing; FALSE: it goes on. For a
 * process about to be stopped whole (tests' NETLOOM_TEST_STOP_AT_STEP), so
 * that it holds no lock on the project meanwhile. */
void nl_metric_writer_quiet (NlMetricWriter *w, gboolean quiet);
/* Flushes, stops the thread and frees; FALSE when a write failed since the
 * last reported error. */
gboolean nl_metric_writer_free (NlMetricWriter *w, GError **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (NlProject, nl_project_close)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (NlNetworkInfo, nl_network_info_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (NlPipelineInfo, nl_pipeline_info_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (NlRunInfo, nl_run_info_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (NlNote, nl_note_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (NlSweepInfo, nl_sweep_info_free)

G_END_DECLS
