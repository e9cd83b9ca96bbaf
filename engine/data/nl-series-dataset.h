/* nl-series-dataset.h — series:FILE.csv, a time series for regression (a
 * row of nl-dataset-kind.c).
 *
 * A header line names the columns (comma-, tab- or semicolon-separated as
 * nl_csv_dataset_open decides); each following line is one time step. A
 * column whose first data cell is a number is numeric, and every numeric
 * column is a feature (others, e.g. a date, are left out and named in the
 * description); a later cell of a numeric column that is not a finite
 * number is an error naming the file, line and column. opts->target_column
 * (default: the last numeric column) is the predicted one.
 *
 * With W = window, H = horizon there are N - W - H + 1 windows of the N
 * rows; sample j is rows j .. j+W-1, all numeric columns, shape (W, C);
 * its label (label_shape (H)) the target's values at rows j+W .. j+W+H-1.
 * Split chronologically: the last round(val_fraction * windows) windows are
 * the validation side (those whose label rows fall past the training
 * rows). Every column is z-scored with the mean and std (population) of the
 * rows the training windows cover, labels too (the target's), whichever
 * side is opened, so both sides see the same numbers; a constant column
 * gets std 1. n_classes 0. */
#pragma once

#include "engine/data/nl-dataset.h"

G_BEGIN_DECLS

#define NL_SERIES_DEFAULT_WINDOW 32

NlDataset *nl_series_dataset_open (const char *path, gboolean train, const NlDatasetOptions *opts,
                                   GError **error);

/* TRUE for a series dataset. */
gboolean nl_series_dataset_is (const NlDataset *ds);

/* What the preview draws: the target's raw values over the whole file. */
typedef struct {
  const char *target;      /* its header name */
  const float *values;     /* n_rows raw (not normalised) values, every row of the file */
  int64_t n_rows;
  int64_t val_start_row;   /* first row only the validation windows use (n_rows when none) */
  int window, horizon;
  int n_columns;           /* numeric columns (features) */
  const char *const *columns; /* their names */
  float target_mean, target_std; /* what the target is z-scored with */
} NlSeriesInfo;

/* ds's info (borrowed); FALSE when ds is no series dataset. */
gboolean nl_series_dataset_info (NlDataset *ds, NlSeriesInfo *info);

G_END_DECLS
