/* nl-scroll-into-view.h — scrolling the nearest GtkScrolledWindow around a
 * widget so that the widget shows (gtk_viewport_scroll_to is GTK 4.12). */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

/* Scrolls as little as needed for W to show whole (its top, when it is
 * taller than the view), with a small margin; nothing when W is not laid
 * out inside a scrolled window. */
void nl_widget_scroll_into_view (GtkWidget *w);

G_END_DECLS
