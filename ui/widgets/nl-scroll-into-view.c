/* nl-scroll-into-view.c — see nl-scroll-into-view.h. */
#include "ui/widgets/nl-scroll-into-view.h"

#define MARGIN 24

void
nl_widget_scroll_into_view (GtkWidget *w)
{
  GtkWidget *sw = gtk_widget_get_ancestor (w, GTK_TYPE_SCROLLED_WINDOW);
  GtkWidget *content = sw ? gtk_scrolled_window_get_child (GTK_SCROLLED_WINDOW (sw)) : NULL;
  GtkAdjustment *adj;
  double x, y, top, page, h = gtk_widget_get_height (w);

  /* the content's coordinates are those of the whole scrolled area */
  if (!content || h <= 0 || !gtk_widget_translate_coordinates (w, content, 0, 0, &x, &y))
    return;
  adj = gtk_scrolled_window_get_vadjustment (GTK_SCROLLED_WINDOW (sw));
  top = gtk_adjustment_get_value (adj);
  page = gtk_adjustment_get_page_size (adj);
  if (y - MARGIN < top || h + 2 * MARGIN > page)
    gtk_adjustment_set_value (adj, y - MARGIN);
  else if (y + h + MARGIN > top + page)
    gtk_adjustment_set_value (adj, y + h + MARGIN - page);
}
