/* test-parsers.c — JSON read from a user's bytes and JSON written for them
 * again (issue 14): numbers json-glib writes as no JSON, nesting past the
 * shared limit and members of the wrong type, in the readers of the project's
 * rows that have no test module of their own (sweep trial values, pipelines). */
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include <json-glib/json-glib.h>

#include "core/nl-json-guard.h"
#include "engine/data/nl-record-reader.h"
#include "engine/data/nl-record-writer.h"
#include "core/nl-json-doc.h"
#include "core/nl-json-member.h"
#include "engine/graph/nl-network.h"
#include "engine/train/nl-run-config.h"
#include "engine/sweep/nl-sweep-space.h"
#include "projects/nl-project.h"

/* json-glib writes 1e-08 as "1e-08.0"; the repair drops that ".0" and
 * nothing else (strings, numbers with a fraction, names with an 'e'). */
static void
test_fix_numbers (void)
{
  static const struct { const char *in, *out; } cases[] = {
    { "1e-08.0", "1e-08" },
    { "[1e+17.0,-2E+19.0,5e-324.0]", "[1e+17,-2E+19,5e-324]" },
    { "{\"a\":1e-08.0,\"b\":true}", "{\"a\":1e-08,\"b\":true}" },
    { "[1.5e-07,10.0,0.0001,2e3]", "[1.5e-07,10.0,0.0001,2e3]" },
    { "[\"1e-08.0\",\"\\\"1e-08.0\"]", "[\"1e-08.0\",\"\\\"1e-08.0\"]" },
    { "{\"size\":\"e5.0\",\"e\":1e5.05}", "{\"size\":\"e5.0\",\"e\":1e5.05}" },
    { "", "" },
  };
  static const double values[] = { 1e-8, -1e-8, 1e17, 2e19, 1e300, 5e-324, 1e-7, 0.1, 3.0, 1e22, -4e-310 };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *text = g_strdup (cases[i].in);
      g_assert_cmpstr (nl_json_fix_numbers (text), ==, cases[i].out);
    }
  g_assert_null (nl_json_fix_numbers (NULL));

  /* every finite double json-glib writes reads back exactly */
  for (gsize i = 0; i < G_N_ELEMENTS (values); i++)
    {
      g_autoptr (JsonNode) n = json_node_init_double (json_node_alloc (), values[i]);
      g_autofree char *text = nl_json_fix_numbers (json_to_string (n, FALSE));
      g_autoptr (GError) error = NULL;
      g_autoptr (JsonNode) back = json_from_string (text, &error);
      g_assert_no_error (error);
      g_assert_cmpfloat (json_node_get_double (back), ==, values[i]);
    }
}

/* The flat reader networks are read with: values, escapes, the walk over
 * containers, the last of two members of one name, and no recursion. */
static void
test_json_doc (void)
{
  static const char text[] = " {\"a\": [1, -0, -9223372036854775808, 9223372036854775807, 1e-8, 2.5E+3, true, false, null],"
                             "\"s\": \"q\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\ud83d\\ude00\xc3\xa9\","
                             "\"o\": {}, \"e\": [], \"a\": [[{\"k\": 1}], 7]} \n";
  g_autoptr (GError) error = NULL;
  g_autoptr (NlJsonDoc) doc = nl_json_doc_parse (text, -1, &error);
  const NlJsonValue *root, *a, *v, *inner;
  g_autoptr (GString) deep = g_string_new (NULL);
  g_autoptr (NlJsonDoc) deep_doc = NULL;
  int n = 0;

  g_assert_no_error (error);
  root = nl_json_doc_root (doc);
  g_assert_cmpint (root->type, ==, NL_JSON_OBJECT);
  g_assert_cmpuint (root->count, ==, 5);
  /* the first "a", walked by hand */
  v = nl_json_first (root);
  g_assert_cmpstr (v->s, ==, "a");
  a = v + 1;
  g_assert_cmpint (a->type, ==, NL_JSON_ARRAY);
  g_assert_cmpuint (a->count, ==, 9);
  v = nl_json_first (a);
  g_assert_cmpint (v->type, ==, NL_JSON_INT);
  g_assert_cmpint (v->i, ==, 1);
  v = nl_json_next (a, v);
  g_assert_cmpint (v->i, ==, 0);
  v = nl_json_next (a, v);
  g_assert_cmpint (v->i, ==, G_MININT64);
  v = nl_json_next (a, v);
  g_assert_cmpint (v->i, ==, G_MAXINT64);
  v = nl_json_next (a, v);
  g_assert_cmpint (v->type, ==, NL_JSON_DOUBLE);
  g_assert_cmpfloat (v->d, ==, 1e-8);
  v = nl_json_next (a, v);
  g_assert_cmpfloat (nl_json_number (v), ==, 2500);
  v = nl_json_next (a, v);
  g_assert_true (v->type == NL_JSON_BOOL && v->b);
  v = nl_json_next (a, v);
  g_assert_true (v->type == NL_JSON_BOOL && !v->b);
  v = nl_json_next (a, v);
  g_assert_cmpint (v->type, ==, NL_JSON_NULL);
  g_assert_null (nl_json_next (a, v));
  g_assert_cmpstr (nl_json_member (root, "s")->s, ==, "q\"\\/\b\f\n\r\t\xc3\xa9\xf0\x9f\x98\x80\xc3\xa9");
  g_assert_null (nl_json_first (nl_json_member (root, "o")));
  g_assert_null (nl_json_first (nl_json_member (root, "e")));
  g_assert_null (nl_json_member (root, "nope"));
  /* two members named "a": the last holds, as in json-glib */
  a = nl_json_member (root, "a");
  g_assert_cmpuint (a->count, ==, 2);
  inner = nl_json_first (nl_json_first (a));
  g_assert_cmpint (nl_json_member (inner, "k")->i, ==, 1);
  g_assert_cmpint (nl_json_next (a, nl_json_first (a))->i, ==, 7);
  for (const NlJsonValue *k = nl_json_first (root); k; k = nl_json_next (root, k))
    n++;
  g_assert_cmpint (n, ==, 5);

  /* a length stops the text: a NUL inside it is no JSON */
  g_clear_pointer (&doc, nl_json_doc_free);
  doc = nl_json_doc_parse ("[1] trailing", 3, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (nl_json_doc_root (doc)->count, ==, 1);
  g_assert_null (nl_json_doc_parse ("[1,\0 2]", 6, &error));
  g_assert_error (error, NL_JSON_DOC_ERROR, NL_JSON_DOC_ERROR_INVALID);
  g_assert_cmpstr (error->message, ==, "line 1, column 4: expected a value");
  g_clear_error (&error);
  g_assert_null (nl_json_doc_parse ("\n\t ", -1, &error));
  g_assert_error (error, NL_JSON_DOC_ERROR, NL_JSON_DOC_ERROR_EMPTY);
  g_clear_error (&error);
  g_assert_null (nl_json_doc_parse ("{\"x\":[1,2}", -1, &error));
  g_assert_cmpstr (error->message, ==, "line 1, column 10: expected ',' or ']'");
  g_clear_error (&error);

  /* 100,000 levels: no recursion, so no stack to run out of */
  for (int i = 0; i < 100000; i++)
    g_string_append (deep, i % 2 ? "[" : "{\"k\":");
  for (int i = 100000 - 1; i >= 0; i--)
    g_string_append_c (deep, i % 2 ? ']' : '}');
  deep_doc = nl_json_doc_parse (deep->str, deep->len, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (nl_json_doc_root (deep_doc)->size, ==, 150000);
}

/* A trial's values are a project row: too deep, or a number of another
 * type, is a message (json_node_get_double read a string as 0); a grid
 * point of 1e-8 is stored so it reads back. */
/* A failed parse says what it found and at which byte, so a reader can word
 * its own error (safetensors names the byte); the message is unchanged. */
static void
test_json_doc_faults (void)
{
  static const struct {
    const char *text;
    NlJsonFault fault;
    gsize at;
  } cases[] = {
    { " \n", NL_JSON_FAULT_EMPTY, 2 },
    { "[tru]", NL_JSON_FAULT_VALUE, 1 },
    { "[1,", NL_JSON_FAULT_VALUE, 3 },
    { "[}", NL_JSON_FAULT_NUMBER, 1 },
    { "[-x]", NL_JSON_FAULT_NUMBER, 2 },
    { "[18446744073709551616]", NL_JSON_FAULT_INT_RANGE, 1 },
    { "[1e999]", NL_JSON_FAULT_NUMBER_RANGE, 1 },
    { "{1:2}", NL_JSON_FAULT_KEY, 1 },
    { "{\"a\" 2}", NL_JSON_FAULT_COLON, 5 },
    { "{\"a\":2]", NL_JSON_FAULT_OBJECT_COMMA, 6 },
    { "[2}", NL_JSON_FAULT_ARRAY_COMMA, 2 },
    { "[] x", NL_JSON_FAULT_TRAILING, 3 },
    { "[\"ab", NL_JSON_FAULT_STRING_END, 4 },
    { "[\"a\tb\"]", NL_JSON_FAULT_CONTROL, 3 },
    { "[\"\\q\"]", NL_JSON_FAULT_ESCAPE, 3 },
    { "[\"\\u12\"]", NL_JSON_FAULT_HEX, 4 },
    { "[\"\\udc00\"]", NL_JSON_FAULT_LONE_LOW, 8 },
    { "[\"\\ud800x\"]", NL_JSON_FAULT_MISSING_LOW, 8 },
    { "[\"\\u0000\"]", NL_JSON_FAULT_NUL, 8 },
    { "[\"\xff\"]", NL_JSON_FAULT_UTF8, 4 },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (GError) plain_error = NULL;
      NlJsonFault fault = NL_JSON_FAULT_NONE;
      gsize at = 0;
      g_assert_null (nl_json_doc_parse_full (cases[i].text, -1, &fault, &at, &error));
      g_assert_null (nl_json_doc_parse (cases[i].text, -1, &plain_error));
      g_assert_cmpstr (error->message, ==, plain_error->message);
      if (fault != cases[i].fault || at != cases[i].at)
        g_error ("%s: fault %d at %zu, expected %d at %zu", cases[i].text, fault, at, cases[i].fault, cases[i].at);
    }
}

static void
test_sweep_point (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlSweepSpace) s = nl_sweep_space_parse ("lr=log:1e-9:1e-7,optimizer=sgd|adam", &error);
  double point[] = { 1e-8, 1 }, back[2] = { 0 };
  g_autofree char *json = NULL, *deep = NULL;

  g_assert_no_error (error);
  json = nl_sweep_space_point_to_json (s, point);
  g_assert_cmpstr (json, ==, "{\"lr\":1e-08,\"optimizer\":\"adam\"}");
  g_assert_true (nl_sweep_space_point_from_json (s, json, back, &error));
  g_assert_no_error (error);
  g_assert_cmpmem (back, sizeof back, point, sizeof point);

  g_assert_false (nl_sweep_space_point_from_json (s, "{\"lr\":\"0.1\",\"optimizer\":\"sgd\"}", back, &error));
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error->message, "lr"));
  g_assert_nonnull (strstr (error->message, "not a number"));
  g_clear_error (&error);

  deep = g_strnfill (80000, '[');
  g_assert_false (nl_sweep_space_point_from_json (s, deep, back, &error));
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error->message, "the trial's values: JSON nested more than 256 levels deep"));
}

/* The typed reads of json-glib members (the run list's columns use them):
 * another type is FALSE, not a critical; absent leaves the value. */
static void
test_typed_members (void)
{
  g_autoptr (JsonNode) root = json_from_string ("{\"i\":3,\"d\":2.5,\"s\":\"x\",\"a\":[1],\"n\":null}", NULL);
  JsonObject *o = json_node_get_object (root);
  double d = -1;
  gint64 i = -1;
  const char *s = NULL;

  g_assert_true (nl_json_number_member (o, "i", &d));
  g_assert_cmpfloat (d, ==, 3);
  g_assert_true (nl_json_number_member (o, "d", &d));
  g_assert_cmpfloat (d, ==, 2.5);
  g_assert_true (nl_json_number_member (o, "nope", &d));
  g_assert_cmpfloat (d, ==, 2.5);
  g_assert_false (nl_json_number_member (o, "s", &d));
  g_assert_false (nl_json_number_member (o, "a", &d));
  g_assert_false (nl_json_number_member (o, "n", &d));
  g_assert_true (nl_json_int_member (o, "i", &i));
  g_assert_cmpint (i, ==, 3);
  g_assert_false (nl_json_int_member (o, "d", &i));
  g_assert_false (nl_json_int_member (o, "a", &i));
  g_assert_cmpint (i, ==, 3);
  g_assert_true (nl_json_string_member (o, "s", &s));
  g_assert_cmpstr (s, ==, "x");
  g_assert_false (nl_json_string_member (o, "a", &s));
  /* the same reads of one node (an array's element) */
  g_assert_cmpstr (nl_json_node_string (json_object_get_member (o, "s")), ==, "x");
  g_assert_null (nl_json_node_string (json_object_get_member (o, "i")));
  g_assert_null (nl_json_node_string (json_object_get_member (o, "n")));
  g_assert_null (nl_json_node_string (NULL));
  g_assert_true (nl_json_node_int (json_array_get_element (json_object_get_array_member (o, "a"), 0), &i));
  g_assert_cmpint (i, ==, 1);
  g_assert_false (nl_json_node_int (json_object_get_member (o, "d"), &i));
  g_assert_false (nl_json_node_int (json_object_get_member (o, "a"), &i));
  g_assert_false (nl_json_node_int (NULL, &i));
  g_assert_cmpint (i, ==, 1);
}

/* Empty records, written from NULL and read into a fresh buffer first:
 * both applied an offset to a NULL pointer (clang's UBSan says so). */
static void
test_empty_records (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("netloom-records-XXXXXX", &error);
  g_autofree char *path = g_build_filename (dir, "empty.rec", NULL);
  NlRecordWriter *w = nl_record_writer_open (path, &error);
  g_autoptr (NlRecordReader) r = NULL;
  const guint8 *data;
  size_t len = 99;

  g_assert_no_error (error);
  g_assert_true (nl_record_writer_append (w, NULL, 0, &error));
  g_assert_true (nl_record_writer_append (w, "abcd", 4, &error));
  g_assert_true (nl_record_writer_append (w, NULL, 0, &error));
  g_assert_true (nl_record_writer_close (w, &error));
  g_assert_no_error (error);
  r = nl_record_reader_open (path, &error);
  g_assert_no_error (error);
  g_assert_cmpint (nl_record_reader_next (r, &data, &len, &error), ==, 1);
  g_assert_cmpuint (len, ==, 0);
  g_assert_cmpint (nl_record_reader_next (r, &data, &len, &error), ==, 1);
  g_assert_cmpmem (data, len, "abcd", 4);
  g_assert_cmpint (nl_record_reader_next (r, &data, &len, &error), ==, 1);
  g_assert_cmpuint (len, ==, 0);
  g_assert_cmpint (nl_record_reader_next (r, &data, &len, &error), ==, 0);
  g_assert_no_error (error);
  g_unlink (path);
  g_rmdir (dir);
}

/* A run's stored settings with a member of another type: one message
 * naming it, not json-glib's critical (fatal in these tests). */
static void
test_run_settings_members (void)
{
  static const struct { const char *member, *message; } cases[] = {
    { "\"epochs\":[1]", "the run's settings: \"epochs\" must be a whole number" },
    { "\"epochs\":2.5", "the run's settings: \"epochs\" must be a whole number" },
    { "\"lr\":\"fast\"", "the run's settings: \"lr\" must be a number" },
    { "\"lr\":null", "the run's settings: \"lr\" must be a number" },
    { "\"optimizer\":5", "the run's settings: \"optimizer\" must be a string" },
    { "\"seed\":{}", "the run's settings: \"seed\" must be a string" },
    { "\"nesterov\":\"yes\"", "the run's settings: \"nesterov\" must be true or false" },
    { "\"augment\":[\"flip\"]", "the run's settings: \"augment\" must be a string" },
    { "\"precision\":null", "the run's settings: \"precision\" must be a string" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_auto (NlRunConfig) rc = { 0 };
      g_autoptr (GError) error = NULL;
      g_autofree char *json = g_strdup_printf ("{\"dataset\":\"mnist\",\"loss\":\"SoftmaxCrossEntropy\",%s}",
                                               cases[i].member);
      nl_run_config_init (&rc);
      g_assert_false (nl_run_config_from_json (&rc, json, &error));
      g_assert_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG);
      g_assert_cmpstr (error->message, ==, cases[i].message);
    }
  /* what the writer writes still reads: a text not set is null */
  {
    g_auto (NlRunConfig) rc = { 0 }, back = { 0 };
    g_autoptr (GError) error = NULL;
    g_autofree char *json = NULL;
    nl_run_config_init (&rc);
    json = nl_run_config_to_json (&rc);
    g_assert_nonnull (strstr (json, "null"));
    nl_run_config_init (&back);
    g_assert_true (nl_run_config_from_json (&back, json, &error));
    g_assert_no_error (error);
  }
}

/* A pipeline row's members of another type were read through json-glib's
 * getters (criticals; a number as "transforms" was dereferenced as NULL). */
static void
test_pipeline_members (void)
{
  static const struct { const char *json, *message; } cases[] = {
    { "{\"name\":\"p\",\"dataset\":\"mnist\",\"transforms\":5}", "the pipeline's \"transforms\" must be a string" },
    { "{\"name\":[1],\"dataset\":\"mnist\"}", "the pipeline's \"name\" must be a string" },
    { "{\"name\":\"p\",\"dataset\":{}}", "the pipeline's \"dataset\" must be a string" },
    { "{\"name\":\"p\",\"split\":\"half\"}", "the pipeline's \"split\" must be a number" },
    { "{\"name\":\"p\",\"batch_size\":1.5}", "the pipeline's \"batch_size\" must be a whole number" },
    { "{\"name\":\"p\",\"workers\":[]}", "the pipeline's \"workers\" must be a whole number" },
  };
  g_autoptr (NlPipelineInfo) ok = NULL;
  g_autoptr (GError) error = NULL;

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (NlPipelineInfo) pl = nl_pipeline_info_from_json (cases[i].json, &error);
      g_assert_null (pl);
      g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_INVALID);
      g_assert_cmpstr (error->message, ==, cases[i].message);
      g_clear_error (&error);
    }
  /* null stands for absent; a whole number does for the split */
  ok = nl_pipeline_info_from_json ("{\"name\":\"p\",\"dataset\":\"mnist\",\"transforms\":null,\"split\":0,"
                                   "\"batch_size\":64}", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (ok->name, ==, "p");
  g_assert_null (ok->transforms);
  g_assert_cmpfloat (ok->split, ==, 0.0);
  g_assert_cmpint (ok->batch_size, ==, 64);
}

/* A control character in a name (an imported ONNX graph's, found by
 * fuzz-onnx: json-glib wrote 0x1f raw) is escaped, and the saved network
 * reads back with the same name. */
static void
test_control_characters (void)
{
  g_autoptr (GError) error = NULL;
  NlNetwork *net = nl_network_new ("pool\x1f" "2d\x01");
  g_autofree char *json = nl_network_to_json (net);
  NlNetwork *back;

  for (const char *c = json; *c; c++)
    g_assert_true ((guchar) *c >= 0x20 || *c == '\n' || *c == '\t' || *c == '\r');
  back = nl_network_load_data (json, -1, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (back->name, ==, "pool\x1f" "2d\x01");
  nl_network_free (back);
  nl_network_free (net);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/parsers/json-doc", test_json_doc);
  g_test_add_func ("/parsers/json-doc-faults", test_json_doc_faults);
  g_test_add_func ("/parsers/fix-numbers", test_fix_numbers);
  g_test_add_func ("/parsers/control-characters", test_control_characters);
  g_test_add_func ("/parsers/sweep-point", test_sweep_point);
  g_test_add_func ("/parsers/pipeline-members", test_pipeline_members);
  g_test_add_func ("/parsers/run-settings-members", test_run_settings_members);
  g_test_add_func ("/parsers/typed-members", test_typed_members);
  g_test_add_func ("/parsers/empty-records", test_empty_records);
  return g_test_run ();
}
