/* test-tensor.c — tensors and shapes: layout, lifetime, views. */
#include <string.h>

#include "core/nl-tensor.h"
#include "nl-test-util.h"

static void
test_layout (void)
{
  int64_t dims[4] = { 2, 3, 5, 7 };
  g_autoptr (NlTensor) t = nl_tensor_new (NL_DTYPE_F32, 4, dims);
  NlShape s = nl_tensor_get_shape (t);
  char buf[96];

  g_assert_cmpint (t->ndim, ==, 4);
  g_assert_cmpint (nl_tensor_numel (t), ==, 210);
  /* row-major strides in elements */
  g_assert_cmpint (t->strides[3], ==, 1);
  g_assert_cmpint (t->strides[2], ==, 7);
  g_assert_cmpint (t->strides[1], ==, 35);
  g_assert_cmpint (t->strides[0], ==, 105);
  g_assert_true (nl_tensor_is_contiguous (t));
  g_assert_cmpuint ((guintptr) t->storage->data % NL_ALIGN, ==, 0);
  g_assert_cmpstr (nl_shape_format (&s, buf, sizeof buf), ==, "(2, 3, 5, 7)");
  g_assert_cmpint (t->storage->device.type, ==, NL_DEVICE_CPU);
}

static void
test_dtypes (void)
{
  NlShape s = nl_shape_of (2, (int64_t) 4, (int64_t) 4);
  g_autoptr (NlTensor) u8 = nl_tensor_zeros (NL_DTYPE_U8, &s);
  g_autoptr (NlTensor) i32 = nl_tensor_zeros (NL_DTYPE_I32, &s);
  g_assert_cmpuint (nl_dtype_size (NL_DTYPE_U8), ==, 1);
  g_assert_cmpuint (nl_dtype_size (NL_DTYPE_I32), ==, 4);
  g_assert_cmpstr (nl_dtype_name (NL_DTYPE_F32), ==, "float32");
  g_assert_cmpuint (u8->storage->nbytes, ==, 16);
  g_assert_cmpuint (i32->storage->nbytes, ==, 64);
  for (int i = 0; i < 16; i++)
    g_assert_cmpint (nl_tensor_u8 (u8)[i] + nl_tensor_i32 (i32)[i], ==, 0);
}

static void
test_views_share_storage (void)
{
  NlShape s = nl_shape_of (2, (int64_t) 6, (int64_t) 4);
  NlShape flat = nl_shape_of (1, (int64_t) 24);
  g_autoptr (NlTensor) t = nl_tensor_zeros (NL_DTYPE_F32, &s);
  NlTensor *v = nl_tensor_reshape (t, &flat);
  g_autoptr (NlTensor) c = NULL;

  nl_tensor_f32 (v)[23] = 5.0f;
  g_assert_cmpfloat (nl_tensor_f32 (t)[5 * 4 + 3], ==, 5.0f);
  /* the view keeps the storage alive after the original goes */
  g_clear_pointer (&t, nl_tensor_unref);
  g_assert_cmpfloat (nl_tensor_f32 (v)[23], ==, 5.0f);
  c = nl_tensor_copy (v);
  nl_tensor_f32 (c)[23] = 1.0f;
  g_assert_cmpfloat (nl_tensor_f32 (v)[23], ==, 5.0f);
  g_assert_true (c->storage != v->storage);
  nl_tensor_unref (v);
}

static void
test_bad_reshape (void)
{
  if (g_test_subprocess ())
    {
      NlShape s = nl_shape_of (1, (int64_t) 6), wrong = nl_shape_of (1, (int64_t) 7);
      g_autoptr (NlTensor) x = nl_tensor_zeros (NL_DTYPE_F32, &s);
      nl_tensor_reshape (x, &wrong);
      return;
    }
  g_test_trap_subprocess (NULL, 0, 0);
  g_test_trap_assert_failed ();
  g_test_trap_assert_stderr ("*nl_tensor_reshape*");
}

static void
test_offsets_and_fill (void)
{
  NlStorage *st = nl_storage_new (100 * sizeof (float));
  NlShape s = nl_shape_of (2, (int64_t) 3, (int64_t) 10);
  g_autoptr (NlTensor) a = nl_tensor_new_on (st, 0, NL_DTYPE_F32, &s);
  g_autoptr (NlTensor) b = nl_tensor_new_on (st, 30, NL_DTYPE_F32, &s);
  nl_storage_unref (st);
  nl_tensor_fill (a, 1.0f);
  nl_tensor_fill (b, 2.0f);
  g_assert_cmpfloat (nl_tensor_f32 (a)[29], ==, 1.0f);
  g_assert_cmpfloat (nl_tensor_f32 (b)[0], ==, 2.0f);
  g_assert_true (nl_tensor_f32 (b) == nl_tensor_f32 (a) + 30);
}

static void
test_shapes (void)
{
  NlShape a = nl_shape_of (3, (int64_t) 1, (int64_t) 28, (int64_t) 28);
  NlShape b = nl_shape_make (3, a.d);
  NlShape absent = NL_SHAPE_ABSENT;
  char buf[96];
  g_assert_true (nl_shape_equal (&a, &b));
  b.d[2] = 27;
  g_assert_false (nl_shape_equal (&a, &b));
  g_assert_cmpint (nl_shape_numel (&a), ==, 784);
  g_assert_cmpint (nl_shape_numel (&absent), ==, 0);
  g_assert_cmpstr (nl_shape_format (&absent, buf, sizeof buf), ==, "(absent)");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/tensor/layout", test_layout);
  g_test_add_func ("/tensor/dtypes", test_dtypes);
  g_test_add_func ("/tensor/views", test_views_share_storage);
  g_test_add_func ("/tensor/bad-reshape", test_bad_reshape);
  g_test_add_func ("/tensor/offsets", test_offsets_and_fill);
  g_test_add_func ("/tensor/shapes", test_shapes);
  return g_test_run ();
}
