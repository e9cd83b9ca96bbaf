/* nl-explain.h — where a trained model looked: saliency, Grad-CAM and
 * occlusion maps of one sample, a layer's activations, and a PCA
 * projection of a layer's outputs over the test set.
 *
 * An NlExplainer holds a run's model rebuilt from one checkpoint (as
 * nl-run-model.h loads it) with batch size 1, and a program whose backward
 * reaches the input, so gradients of one class score can be read at the
 * input and at any node. Every call blocks (the GUI calls them from a GTask
 * thread); one explainer is used by one thread at a time. Errors name the
 * thing: the run, the checkpoint, the layer, the class.
 *
 * The methods (maps >= 0, divided by their maximum):
 *  - saliency: |d y_c / d x| of the class's score y_c (the network's
 *    output: a logit where it ends before its softmax), the maximum over
 *    channels per pixel. Where the input takes no gradient (token ids into
 *    an Embedding) each token scores the L2 norm of the gradient at the
 *    embedding's output: a 1 x T map.
 *  - gradcam: ReLU(sum_c w_c A_c) over the feature maps A of a Conv2D-like
 *    layer (default: the last Conv2D, nl_explainer_default_layer), w_c the spatial mean of
 *    d y_c / d A_c, resized bilinearly to the input (PyTorch's
 *    align_corners=False). Images only.
 *  - occlusion: a window of 0 (the normalised mean; default a quarter of
 *    the shorter side, moved by half a window, the last one flush with the
 *    edge) over every channel; each pixel gets the mean drop of the class's
 *    probability over the windows covering it, clipped at 0. Images only.
 * Each costs one forward and one backward (occlusion: one forward per
 * window, in batches of 32); numbers in the README. */
#pragma once

#include "core/nl-shape.h"
#include "projects/nl-project.h"

G_BEGIN_DECLS

typedef enum {
  NL_EXPLAIN_SALIENCY,
  NL_EXPLAIN_GRADCAM,
  NL_EXPLAIN_OCCLUSION,
  NL_EXPLAIN_METHOD_COUNT
} NlExplainMethod;

/* "saliency", "gradcam", "occlusion" */
const char *nl_explain_method_name (NlExplainMethod m);
gboolean nl_explain_method_parse (const char *s, NlExplainMethod *m);

/* A run's checkpoint, ready to explain samples. */
typedef struct NlExplainer NlExplainer;

/* which: "best", "last" or an epoch number (NULL: the best). */
NlExplainer *nl_explainer_new (NlProject *p, gint64 run, const char *which, GError **error);
void nl_explainer_free (NlExplainer *e);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (NlExplainer, nl_explainer_free)

typedef struct {
  NlExplainMethod method;
  int target_class;      /* -1: the predicted class */
  const char *layer;     /* Grad-CAM layer node id; NULL: the last Conv2D */
  int window, stride;    /* occlusion; 0: defaults */
} NlExplainOptions;

typedef struct {
  int height, width;     /* of the map = the input's spatial size (sequence: 1 x T) */
  float *map;            /* [height * width], >= 0, max 1; owned */
  int n_classes;
  float *scores;         /* [n_classes] probabilities; owned */
  int predicted, target;
} NlExplanation;

void nl_explanation_clear (NlExplanation *x);

/* sample: one sample of the run's input shape, already normalised as the
 * run's pipeline does. */
gboolean nl_explainer_explain (NlExplainer *e, const float *sample, const NlExplainOptions *o,
                               NlExplanation *out, GError **error);

/* Activation viewer: the output of node `layer` for one sample: (C, H, W)
 * floats, owned by the caller (g_free). A layer of (T, D) outputs per
 * sample gives (1, T, D), one of F features (1, 1, F). */
float *nl_explainer_activations (NlExplainer *e, const float *sample, const char *layer, int *c, int *h,
                                 int *w, GError **error);

/* Projection: PCA of node `layer`'s outputs over the first n test samples:
 * xy[2*n], labels[n] owned by the caller (g_free). */
gboolean nl_explainer_project (NlExplainer *e, const char *layer, int n, float **xy, int **labels,
                               GError **error);

/* Beyond the helpers' contract. */
/* The same projection by t-SNE (nl-tsne.h; exact, 1000 iterations;
 * perplexity <= 0: 30). Deterministic. About 2 s for 1000 samples; keep n
 * to a thousand or two. */
gboolean nl_explainer_project_tsne (NlExplainer *e, const char *layer, int n, double perplexity, float **xy,
                                    int **labels, GError **error);
/* The sample shape the model takes, e.g. (1, 28, 28). */
NlShape nl_explainer_sample_shape (const NlExplainer *e);
/* Grad-CAM's default layer: the last Conv2D, i.e. the one with the most
 * nodes on a path from the input (in a residual block the main branch's,
 * not the shortcut's); NULL: none. */
const char *nl_explainer_default_layer (NlExplainer *e);
/* The class names: the dataset's, else "0", "1", ... (n_classes, NULL-terminated). */
const char *const *nl_explainer_class_names (const NlExplainer *e);
/* PATH decoded and normalised as `predict` does (nl_image_file_read_sample):
 * *sample the normalised sample, *seen (may be NULL) the image in [0, 1],
 * both of nl_explainer_sample_shape's size (g_free). */
gboolean nl_explainer_read_image (NlExplainer *e, const char *path, float **sample, float **seen, GError **error);
/* Test sample `index` of the run's dataset (what nl_explainer_project's
 * points are, in order): normalised as the run's pipeline does (what
 * nl_explainer_explain takes), else as the dataset gives it (images in
 * [0, 1], to show); *label (may be NULL) its class. g_free. */
float *nl_explainer_test_sample (NlExplainer *e, int64_t index, gboolean normalised, int *label, GError **error);
/* src (sh x sw) resized to dst (dh x dw) bilinearly, as PyTorch's
 * interpolate (mode="bilinear", align_corners=False): how Grad-CAM's map
 * reaches the input's size, and how an overlay may be drawn larger. */
void nl_explain_resize_bilinear (const float *src, int sh, int sw, float *dst, int dh, int dw);

G_END_DECLS
