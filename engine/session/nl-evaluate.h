/* nl-evaluate.h — how a trained checkpoint does, class by class.
 *
 * nl_evaluate_run rebuilds a run's model from its snapshots (network,
 * hyper-parameters), loads one of its checkpoints and runs inference over
 * the data the run was tested on each epoch — the same split, batch size,
 * normalisation and order as nl_trainer_evaluate — so its accuracy equals
 * the run's stored test accuracy for that checkpoint's epoch. It returns
 * the confusion matrix and the per-class and averaged scores the GUI's
 * evaluation view shows, the most confident mistakes, and keeps the model
 * and the dataset open to fetch those samples and to classify image files.
 *
 * Every call blocks (the GUI calls them from a GTask thread). Errors name
 * the thing: the run, the checkpoint, the network snapshot that no longer
 * builds, the dataset missing on this machine, the unreadable image. */
#pragma once

#include "engine/session/nl-run.h"

G_BEGIN_DECLS

typedef struct {
  int64_t index;       /* in the evaluated dataset (nl_evaluation_get_sample) */
  int truth, predicted;
  double confidence;   /* the model's probability of `predicted` */
} NlMisclassified;

typedef struct NlEvaluationPrivate NlEvaluationPrivate;

/* Read-only results; free with nl_evaluation_free. */
typedef struct {
  gint64 run, checkpoint;
  int epoch;                  /* the checkpoint's */
  char *dataset;              /* what was evaluated, e.g. "Fashion-MNIST test (10000 images) from DIR" */
  int n_classes;
  char **class_names;         /* n_classes, NULL-terminated: the dataset's, else "0", "1", ... */
  int64_t *confusion;         /* n_classes^2, [true * n_classes + predicted] */
  double *precision, *recall, *f1;  /* per class; 0 where undefined (scikit-learn's zero_division=0) */
  int64_t *support;           /* samples per true class */
  int64_t n_samples, n_correct;
  double accuracy;            /* n_correct / n_samples */
  double macro_f1;            /* mean over the classes that occur as truth or prediction */
  double weighted_f1;         /* by support */
  NlMisclassified *misclassified; /* the most confident mistakes, by confidence (highest first) */
  int n_misclassified;
  NlShape sample_shape;       /* what nl_evaluation_get_sample writes, e.g. (1, 28, 28) */
  float mean, std;            /* the input normalisation of the run */
  double seconds;             /* inference over the dataset */
  double images_per_s;        /* samples per second in the model itself (loading aside); NaN before a pass */
  double latency_ms;          /* the model's time for the last single prediction; NaN before one */
  gint64 int8_model;          /* the INT8 model evaluated (nl-run-quantize.h); 0: the fp32 checkpoint */
  gboolean norm_absent;       /* the model carries no normalisation (an imported one): mean and std are
                                 what was given, else 0 and 1 (inputs as read) */
  gboolean norm_given;        /* mean and std were given (NlEvalNorm), not the run's */
  NlEvaluationPrivate *priv;
} NlEvaluation;

/* Evaluates checkpoint `which` ("best", "last" or an epoch number) of RUN.
 * max_misclassified: the mistakes kept (< 0: all). progress (may be NULL)
 * is called with the fraction done after each batch, on the calling thread.
 * A cancelled `cancel` stops between batches with G_IO_ERROR_CANCELLED. */
NlEvaluation *nl_evaluate_run (NlProject *p, gint64 run, const char *which, int max_misclassified,
                               GCancellable *cancel, void (*progress) (gpointer user, double fraction),
                               gpointer user, GError **error);
/* The same on the test split of `dataset` (a dataset spec; NULL: the run's). */
NlEvaluation *nl_evaluate_run_on (NlProject *p, gint64 run, const char *which, const char *dataset,
                                  int max_misclassified, GCancellable *cancel,
                                  void (*progress) (gpointer user, double fraction), gpointer user, GError **error);
/* The same with the run's INT8 model (int8: the newest, or the newest made
 * from checkpoint `which`; an error naming the run when there is none)
 * instead of the checkpoint's fp32 weights. fp32 runs through the
 * inference executor (nl-infer-net.h) where it compiles, else through the
 * training program. */
NlEvaluation *nl_evaluate_run_full (NlProject *p, gint64 run, const char *which, const char *dataset, gboolean int8,
                                    int max_misclassified, GCancellable *cancel,
                                    void (*progress) (gpointer user, double fraction), gpointer user,
                                    GError **error);
/* The model of checkpoint `which` of RUN and the test split of `dataset`
 * (NULL: the run's) without evaluating: n_classes, class_names,
 * sample_shape, mean and std are set, the scores are not. need_data: the
 * dataset must open (else the Input's fixed shape will do, for files). */
NlEvaluation *nl_evaluation_open (NlProject *p, gint64 run, const char *which, const char *dataset,
                                  gboolean need_data, GError **error);
/* nl_evaluation_open with the run's INT8 model (int8), as nl_evaluate_run_full. */
NlEvaluation *nl_evaluation_open_full (NlProject *p, gint64 run, const char *which, const char *dataset,
                                       gboolean need_data, gboolean int8, GError **error);
/* The input normalisation to evaluate or predict with instead of the
 * run's: what an imported model without one needs. NAN: the run's. */
typedef struct {
  double mean, std;
} NlEvalNorm;
/* nl_evaluate_run_full and nl_evaluation_open_full with norm (may be NULL). */
NlEvaluation *nl_evaluate_run_norm (NlProject *p, gint64 run, const char *which, const char *dataset, gboolean int8,
                                    const NlEvalNorm *norm, GError **error);
NlEvaluation *nl_evaluation_open_norm (NlProject *p, gint64 run, const char *which, const char *dataset,
                                       gboolean need_data, gboolean int8, const NlEvalNorm *norm, GError **error);
/* Classifies TEXT (UTF-8; invalid bytes read as U+FFFD) with a text run's
 * model: encoded with the run's vocabulary to its max_length tokens, as
 * training saw its samples. *probs: n_classes values (g_free). An error
 * naming the run when it was not trained on text. */
gboolean nl_evaluation_predict_text (NlEvaluation *ev, const char *text, double **probs, GError **error);
void nl_evaluation_free (NlEvaluation *ev);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (NlEvaluation, nl_evaluation_free)

/* Sample `index` of the evaluated dataset as the dataset gives it (images
 * in [0, 1], not normalised) into pixels (numel of ev->sample_shape floats);
 * *shape (may be NULL) receives ev->sample_shape. Thread-safe. */
gboolean nl_evaluation_get_sample (NlEvaluation *ev, int64_t index, float *pixels, NlShape *shape,
                                   GError **error);

/* Samples in the evaluation's dataset (0 without one). */
int64_t nl_evaluation_n_samples (const NlEvaluation *ev);
/* Classifies sample `index` of the dataset, normalised as the loader does
 * in training: *probs (g_free) receives ev->n_classes probabilities, *label
 * (may be NULL) the sample's class. */
gboolean nl_evaluation_predict_sample (NlEvaluation *ev, int64_t index, double **probs, int *label,
                                       GError **error);

/* Classifies a PNG or JPEG file with the evaluation's model: the image is
 * decoded as image-folder datasets decode (RGB, bilinear resize to the
 * model's H x W), made grayscale (ITU-R 601 luma) for one-channel models,
 * normalised as in training. *probs (g_free) receives ev->n_classes
 * probabilities summing to 1; *seen (may be NULL; g_free) the image as the
 * model saw it before normalisation (ev->sample_shape floats in [0, 1]).
 * Serialised by a lock, so any thread may call it. */
gboolean nl_evaluation_predict_image_file (NlEvaluation *ev, const char *path, double **probs, float **seen,
                                           GError **error);

/* PATH as a model of sample shape `shape` ((1 or 3, H, W)) trained with
 * mean and std sees it, decoded as above: x (numel of shape) the
 * normalised sample, seen (may be NULL) the image in [0, 1]. */
gboolean nl_image_file_read_sample (const char *path, const NlShape *shape, float mean, float std, float *x,
                                    float *seen, GError **error);

/* The same without an evaluation: builds the model of checkpoint `which`
 * of RUN, classifies the image and frees it. The run's dataset supplies the
 * class names and, when the network's Input sets no shape, the sample
 * shape; without the dataset the names are "0", "1", ... *probs and
 * *class_names (g_free, g_strfreev; n and NULL-terminated) are set on success. */
gboolean nl_predict_image_file (NlProject *p, gint64 run, const char *which, const char *path, double **probs,
                                int *n, char ***class_names, GError **error);

G_END_DECLS
