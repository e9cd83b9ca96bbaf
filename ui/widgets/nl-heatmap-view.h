/* nl-heatmap-view.h — a sample image with a heat map laid over it, drawn
 * with Cairo: the image scaled to fit (nearest, so pixels stay crisp), the
 * map (values in [0, 1]) through a colour map with alpha = opacity x value
 * weight, and a colour bar. The Explain overlay's picture. */
#pragma once

#include <gtk/gtk.h>

#include "core/nl-shape.h"

G_BEGIN_DECLS

#define NL_TYPE_HEATMAP_VIEW (nl_heatmap_view_get_type ())
G_DECLARE_FINAL_TYPE (NlHeatmapView, nl_heatmap_view, NL, HEATMAP_VIEW, GtkWidget)

GtkWidget *nl_heatmap_view_new (void);
/* A (1 or 3, H, W) sample in [0, 1], copied; NULL clears. */
void nl_heatmap_view_set_sample (NlHeatmapView *v, const float *pixels, const NlShape *shape);
/* The map (h x w values in [0, 1], row-major), copied; NULL clears. It is
 * stretched over the image (a 1 x T sequence map becomes a strip). */
void nl_heatmap_view_set_map (NlHeatmapView *v, const float *map, int h, int w);
/* The stored map (NULL when none) and its size. */
const float *nl_heatmap_view_get_map (NlHeatmapView *v, int *h, int *w);
void nl_heatmap_view_set_opacity (NlHeatmapView *v, double opacity);  /* [0, 1] */
double nl_heatmap_view_get_opacity (NlHeatmapView *v);

/* Draws what the widget shows into cr at width x height (the snapshot and
 * tests use it). */
void nl_heatmap_view_draw (NlHeatmapView *v, cairo_t *cr, int width, int height);
/* The colour map: t in [0, 1] to RGB in [0, 1] (dark blue, cyan, yellow, red). */
void nl_heatmap_color (double t, double rgb[3]);
/* map values (n of them) scaled to [0, 1] by their own range, as RGBA
 * (cairo ARGB32) through nl_heatmap_color; a flat map is all 0. */
cairo_surface_t *nl_heatmap_surface (const float *map, int h, int w);

G_END_DECLS
