/* nl-screenshot.c — snapshot a widget into a render node, render it. */
#include "ui/nl-screenshot.h"

GdkTexture *
nl_widget_render_texture (GtkWidget *widget, GError **error)
{
  int w = gtk_widget_get_width (widget), h = gtk_widget_get_height (widget);
  GtkNative *native = gtk_widget_get_native (widget);
  GskRenderer *renderer = native ? gtk_native_get_renderer (native) : NULL;
  g_autoptr (GdkPaintable) paintable = NULL;
  GtkSnapshot *snapshot;
  GskRenderNode *node;
  GdkTexture *texture;

  if (w <= 0 || h <= 0 || !renderer)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "the window is not shown yet (%dx%d)", w, h);
      return NULL;
    }
  paintable = gtk_widget_paintable_new (widget);
  snapshot = gtk_snapshot_new ();
  gdk_paintable_snapshot (paintable, GDK_SNAPSHOT (snapshot), w, h);
  node = gtk_snapshot_free_to_node (snapshot);
  if (!node)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "the window drew nothing");
      return NULL;
    }
  texture = gsk_renderer_render_texture (renderer, node, &GRAPHENE_RECT_INIT (0, 0, w, h));
  gsk_render_node_unref (node);
  return texture;
}

gboolean
nl_widget_save_png (GtkWidget *widget, const char *path, GError **error)
{
  g_autoptr (GdkTexture) texture = nl_widget_render_texture (widget, error);
  if (!texture)
    return FALSE;
  if (!gdk_texture_save_to_png (texture, path))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "cannot write %s", path);
      return FALSE;
    }
  return TRUE;
}
