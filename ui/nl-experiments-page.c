/* nl-experiments-page.c — placeholder until the page is built (issue 6). */
#include "ui/nl-experiments-page.h"

struct _NlExperimentsPage {
  AdwBin parent_instance;
  NlWorkspace *ws;
};

G_DEFINE_FINAL_TYPE (NlExperimentsPage, nl_experiments_page, ADW_TYPE_BIN)

static void
nl_experiments_page_dispose (GObject *object)
{
  NlExperimentsPage *page = NL_EXPERIMENTS_PAGE (object);
  g_clear_object (&page->ws);
  G_OBJECT_CLASS (nl_experiments_page_parent_class)->dispose (object);
}

static void
nl_experiments_page_class_init (NlExperimentsPageClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = nl_experiments_page_dispose;
}

static void
nl_experiments_page_init (NlExperimentsPage *page)
{
  GtkWidget *status = adw_status_page_new ();
  adw_status_page_set_title (ADW_STATUS_PAGE (status), "Experiments");
  adw_bin_set_child (ADW_BIN (page), status);
}

void
nl_experiments_page_set_workspace (NlExperimentsPage *page, NlWorkspace *ws)
{
  g_return_if_fail (NL_IS_EXPERIMENTS_PAGE (page));
  g_set_object (&page->ws, ws);
}
