/* nl-data-page.c — placeholder until the page is built (issue 6). */
#include "ui/nl-data-page.h"

struct _NlDataPage {
  AdwBin parent_instance;
  NlWorkspace *ws;
};

G_DEFINE_FINAL_TYPE (NlDataPage, nl_data_page, ADW_TYPE_BIN)

static void
nl_data_page_dispose (GObject *object)
{
  NlDataPage *page = NL_DATA_PAGE (object);
  g_clear_object (&page->ws);
  G_OBJECT_CLASS (nl_data_page_parent_class)->dispose (object);
}

static void
nl_data_page_class_init (NlDataPageClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = nl_data_page_dispose;
}

static void
nl_data_page_init (NlDataPage *page)
{
  GtkWidget *status = adw_status_page_new ();
  adw_status_page_set_title (ADW_STATUS_PAGE (status), "Data");
  adw_bin_set_child (ADW_BIN (page), status);
}

void
nl_data_page_set_workspace (NlDataPage *page, NlWorkspace *ws)
{
  g_return_if_fail (NL_IS_DATA_PAGE (page));
  g_set_object (&page->ws, ws);
}
