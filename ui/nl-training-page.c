/* nl-training-page.c — placeholder until the page is built (issue 6). */
#include "ui/nl-training-page.h"

struct _NlTrainingPage {
  AdwBin parent_instance;
  NlWorkspace *ws;
};

G_DEFINE_FINAL_TYPE (NlTrainingPage, nl_training_page, ADW_TYPE_BIN)

static void
nl_training_page_dispose (GObject *object)
{
  NlTrainingPage *page = NL_TRAINING_PAGE (object);
  g_clear_object (&page->ws);
  G_OBJECT_CLASS (nl_training_page_parent_class)->dispose (object);
}

static void
nl_training_page_class_init (NlTrainingPageClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = nl_training_page_dispose;
}

static void
nl_training_page_init (NlTrainingPage *page)
{
  GtkWidget *status = adw_status_page_new ();
  adw_status_page_set_title (ADW_STATUS_PAGE (status), "Training");
  adw_bin_set_child (ADW_BIN (page), status);
}

void
nl_training_page_set_workspace (NlTrainingPage *page, NlWorkspace *ws)
{
  g_return_if_fail (NL_IS_TRAINING_PAGE (page));
  g_set_object (&page->ws, ws);
}
