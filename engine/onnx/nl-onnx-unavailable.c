/* nl-onnx-unavailable.c — the ONNX entry points of a build without
 * protobuf-c or onnx.proto (meson option onnx): each says so. */
#include "engine/onnx/nl-onnx-export.h"

G_DEFINE_QUARK (nl-onnx-error-quark, nl_onnx_error)

static gboolean
unavailable (GError **error)
{
  g_set_error_literal (error, NL_ONNX_ERROR, NL_ONNX_ERROR_UNAVAILABLE,
                       "this netloom was built without ONNX support (meson option onnx: it needs protobuf-c "
                       "and the onnx.proto of libonnx-dev)");
  return FALSE;
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
