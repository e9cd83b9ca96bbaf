/* nl-onnx-unavailable.c — the ONNX entry points of a build without
 * protobuf-c or onnx.proto (meson option onnx): each says so. */
#include "engine/formats/onnx/nl-onnx-export.h"
#include "engine/formats/onnx/nl-onnx-export-int8.h"
#include "engine/formats/onnx/nl-onnx-import.h"

G_DEFINE_QUARK (nl-onnx-error-quark, nl_onnx_error)

static gboolean
unavailable (GError **error)
{
  g_set_error_literal (error, NL_ONNX_ERROR, NL_ONNX_ERROR_UNAVAILABLE,
                       "this netloom was built without ONNX support (meson option onnx: it needs protobuf-c "
                       "and the onnx.proto of libonnx-dev)");
  return FALSE;
}

/* nothing is exported by this build */
NlOnnxOpForm
nl_onnx_op_form (const char *op_name, const char **why)
{
  if (why)
    *why = NULL;
  return NL_ONNX_OP_UNMAPPED;
}

gboolean
nl_onnx_available (void)
{
  return FALSE;
}

GBytes *
nl_onnx_export (const NlModel *m, const NlOnnxExportOptions *o, GError **error)
{
  unavailable (error);
  return NULL;
}

gboolean
nl_onnx_export_file (const NlModel *m, const NlOnnxExportOptions *o, const char *path, GError **error)
{
  return unavailable (error);
}

GBytes *
nl_onnx_export_int8 (const NlModel *m, const NlQuantTable *t, const NlOnnxExportOptions *o, GError **error)
{
  unavailable (error);
  return NULL;
}

gboolean
nl_onnx_export_int8_file (const NlModel *m, const NlQuantTable *t, const NlOnnxExportOptions *o, const char *path,
                          GError **error)
{
  return unavailable (error);
}

NlOnnxImport *
nl_onnx_import_data (const void *data, gsize size, const char *base_dir, GHashTable *bound, GError **error)
{
  unavailable (error);
  return NULL;
}

NlOnnxImport *
nl_onnx_import_file (const char *path, GError **error)
{
  unavailable (error);
  return NULL;
}

/* nothing is ever made, so nothing is freed or read */
void
nl_onnx_import_free (NlOnnxImport *imp)
{
}

NlNetwork *
nl_onnx_import_get_network (NlOnnxImport *imp)
{
  return NULL;
}

NlShape
nl_onnx_import_get_sample_shape (NlOnnxImport *imp)
{
  return (NlShape) { 0 };
}

NlModel *
nl_onnx_import_new_model (NlOnnxImport *imp, const NlOptimConfig *optim, GError **error)
{
  unavailable (error);
  return NULL;
}

const char *
nl_onnx_import_get_metadata (NlOnnxImport *imp, const char *key)
{
  return NULL;
}
