/* nl-seq-preview.h — the text and series parts of a data preview
 * (NlTextPreview, NlSeriesPreview in nl-data-preview.h), built from an open
 * dataset of those kinds. Private to nl-data-preview.c. */
#pragma once

#include "engine/session/nl-data-preview.h"

G_BEGIN_DECLS

/* NULL (no error) when ds is no text dataset; NULL with
 * G_IO_ERROR_CANCELLED when cancelled. indices: the previewed samples. */
NlTextPreview *nl_text_preview_build (NlDataset *ds, const int64_t *indices, int n_samples, GCancellable *cancellable,
                                      GError **error);
void nl_text_preview_free (NlTextPreview *t);

/* NULL when ds is no series dataset. */
NlSeriesPreview *nl_series_preview_build (NlDataset *ds);
void nl_series_preview_free (NlSeriesPreview *s);

G_END_DECLS
