/* editor/nl-network-page.c — placeholder until the page is built (issue 6). */
#include "ui/editor/nl-network-page.h"

struct _NlNetworkPage {
  AdwBin parent_instance;
  NlWorkspace *ws;
};

G_DEFINE_FINAL_TYPE (NlNetworkPage, nl_network_page, ADW_TYPE_BIN)

static void
nl_network_page_dispose (GObject *object)
{
  NlNetworkPage *page = NL_NETWORK_PAGE (object);
  g_clear_object (&page->ws);
  G_OBJECT_CLASS (nl_network_page_parent_class)->dispose (object);
}

static void
nl_network_page_class_init (NlNetworkPageClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = nl_network_page_dispose;
}

static void
nl_network_page_init (NlNetworkPage *page)
{
  GtkWidget *status = adw_status_page_new ();
  adw_status_page_set_title (ADW_STATUS_PAGE (status), "Network");
  adw_bin_set_child (ADW_BIN (page), status);
}

void
nl_network_page_set_workspace (NlNetworkPage *page, NlWorkspace *ws)
{
  g_return_if_fail (NL_IS_NETWORK_PAGE (page));
  g_set_object (&page->ws, ws);
}

void
nl_network_page_open_network (NlNetworkPage *page, const char *name, int version)
{
}
