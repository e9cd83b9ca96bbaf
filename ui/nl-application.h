/* nl-application.h — the GtkApplication: app actions, style, windows. */
#pragma once

#include <adwaita.h>

G_BEGIN_DECLS

typedef struct {
  char *project;          /* open this; NULL: the last one, or the sample on first start */
  char *screenshot;       /* render the window to this PNG after loading, then quit */
  char *page;             /* network, data, training, experiments */
  int width, height;      /* window size, 0: remembered / default */
  double train_for_seconds; /* screenshot mid-training: start a run, shoot after N s */
  gint64 quantize_run;    /* screenshot of the Quantize dialog: quantize this run, shoot the result */
  gint64 run;             /* screenshot: the training page shows this stored run */
  char *view;             /* screenshot: the training page's view (loss ... layers) */
  char *layer;            /* screenshot: the Layers view with this layer's histograms open */
  gint64 explain_run;     /* screenshot of the evaluation window explaining one of this run's mistakes */
  char *explain_method;   /* with explain_run: saliency, gradcam (NULL) or occlusion */
  gint64 activations_run; /* screenshot of the evaluation window's Activations tab for this run */
  char *network;          /* screenshot: the Network page opens this template (data/networks/NAME.json) */
} NlLaunchOptions;

void nl_launch_options_clear (NlLaunchOptions *o);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (NlLaunchOptions, nl_launch_options_clear)

#define NL_TYPE_APPLICATION (nl_application_get_type ())
G_DECLARE_FINAL_TYPE (NlApplication, nl_application, NL, APPLICATION, AdwApplication)

/* Copies opts (may be NULL). */
NlApplication *nl_application_new (const NlLaunchOptions *opts);
/* Where the sample project lives: $XDG_DATA_HOME/netloom/sample.netloom */
char *nl_application_sample_path (void);

G_END_DECLS

G_BEGIN_DECLS
/* Non-zero when a screenshot failed. */
int nl_application_get_exit_status (NlApplication *app);
/* Before any other call: the user's locale, and the GUI's messages from
 * localedir, or from $NETLOOM_LOCALEDIR when set (a build tree's catalogs,
 * the tests' pseudo-locale). */
void nl_application_init_i18n (const char *localedir);
G_END_DECLS
