/* bench-kernels.c — per-op times of Dense and Conv2D for the benchmark
 * networks' layers (MLP 784-256-10, LeNet), batch 128, and of the library
 * alternatives the kernels were chosen against (OpenBLAS vs oneDNN sgemm,
 * oneDNN convolutions in plain, blocked and nhwc layouts).
 *
 * Not built by meson. Build by hand after `ninja -C build-h1` (whole-archive:
 * the registry refers to the ops by weak symbols):
 *   cc -O2 -fopenmp -I. bench/bench-kernels.c \
 *      -Wl,--whole-archive build-h1/ops/libnlops.a -Wl,--no-whole-archive \
 *      $(pkg-config --cflags --libs glib-2.0 openblas) -ldnnl -lm -o /tmp/bench-kernels
 *   /tmp/bench-kernels [threads] [ops|raw|all] [only ops whose label has this]
 *   /tmp/bench-kernels 2 torch | python3 - 2    (PyTorch on the same shapes)
 * Each figure is the best mean over 40 blocks of a few runs (NL_BENCH_BLOCKS
 * to change), which keeps other load on the machine out of the numbers;
 * NL_BENCH_CPUTIME=1 measures CPU time instead (meaningful with 1 thread). */
#include <cblas.h>
#include <dnnl.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ops/nl-op-instance.h"
#include "ops/nl-op-registry.h"

static gboolean use_cpu_time;
static int blocks = 40;

/* Wall time; with NL_BENCH_CPUTIME=1 process CPU time instead, which for a
 * one-thread run ignores the time other processes hold the cores. */
static double
now (void)
{
  struct timespec t;
  clock_gettime (use_cpu_time ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

#define TIME(label, reps, stmt)                                      \
  do                                                                 \
    {                                                                \
      double best_ = 1e9;                                            \
      for (int i_ = 0; i_ < 3; i_++)                                 \
        {                                                            \
          stmt;                                                      \
        }                                                            \
      for (int b_ = 0; b_ < blocks; b_++)                                \
        {                                                            \
          double t_ = now (), d_;                                    \
          for (int i_ = 0; i_ < (reps); i_++)                        \
            {                                                        \
              stmt;                                                  \
            }                                                        \
          d_ = (now () - t_) / (reps);                               \
          best_ = MIN (best_, d_);                                   \
        }                                                            \
      printf ("  %-44s %8.3f ms\n", label, best_ * 1e3);             \
    }                                                                \
  while (0)

static void
fill (NlTensor *t, guint32 seed)
{
  GRand *r = g_rand_new_with_seed (seed);
  float *p = nl_tensor_f32 (t);
  for (int64_t i = 0; i < nl_tensor_numel (t); i++)
    p[i] = (float) g_rand_double_range (r, -1, 1);
  g_rand_free (r);
}

static const char *only; /* run only ops whose label contains this */

static void
bench_op (const char *label, const char *op, const char *const *params, NlShape in, gboolean first, int reps)
{
  g_autoptr (GError) error = NULL;
  NlOpInstance *inst = nl_op_instance_new (nl_op_lookup (op), params, 1, &in, TRUE, &error);
  char l[96];

  if (only && !strstr (label, only))
    {
      nl_op_instance_free (inst);
      return;
    }
  if (!inst)
    g_error ("%s: %s", label, error->message);
  for (int i = 0; i < inst->n_in; i++)
    if (inst->in[i])
      fill (inst->in[i], 1 + i);
  fill (inst->out_grad[0], 99);
  if (first)
    {
      /* the first layer: nothing upstream wants d(data) */
      nl_tensor_unref (inst->in_grad[0]);
      inst->in_grad[0] = NULL;
    }
  printf ("%s\n", label);
  TIME ("forward", reps, nl_op_instance_forward (inst, NULL));
  snprintf (l, sizeof l, "backward%s", first ? " (no d(data))" : "");
  TIME (l, reps, nl_op_instance_backward (inst, NULL));
  TIME ("forward + backward", reps,
        (nl_op_instance_forward (inst, NULL), nl_op_instance_backward (inst, NULL)));
  nl_op_instance_free (inst);
}

#define P(...) ((const char *const[]) { __VA_ARGS__, NULL })

static void
bench_ops (void)
{
  printf ("== netloom ops, batch 128\n");
  bench_op ("Dense 784->256 (MLP fc1)", "Dense", P ("units", "256"), nl_shape_of (4, 128L, 1L, 28L, 28L), TRUE, 10);
  bench_op ("Dense 256->10 (MLP fc2)", "Dense", P ("units", "10"), nl_shape_of (2, 128L, 256L), FALSE, 20);
  bench_op ("Conv2D 1->20 5x5 on 28x28 (LeNet conv1)", "Conv2D", P ("channels", "20", "kernel", "5"),
            nl_shape_of (4, 128L, 1L, 28L, 28L), TRUE, 2);
  bench_op ("Conv2D 20->50 5x5 on 12x12 (LeNet conv2)", "Conv2D", P ("channels", "50", "kernel", "5"),
            nl_shape_of (4, 128L, 20L, 12L, 12L), FALSE, 1);
  bench_op ("Dense 800->500 (LeNet fc1)", "Dense", P ("units", "500"), nl_shape_of (2, 128L, 800L), FALSE, 5);
  bench_op ("Dense 500->10 (LeNet fc2)", "Dense", P ("units", "10"), nl_shape_of (2, 128L, 500L), FALSE, 20);
}

/* ---- the alternatives: OpenBLAS vs oneDNN sgemm, oneDNN convolutions ---- */

static float *
rnd (size_t n)
{
  float *p = g_malloc (n * sizeof (float));
  for (size_t i = 0; i < n; i++)
    p[i] = (float) g_random_double_range (-1, 1);
  return p;
}

static void
bench_gemm (int n, int k, int u)
{
  float *x = rnd ((size_t) n * k), *w = rnd ((size_t) u * k), *y = rnd ((size_t) n * u);
  float *dy = rnd ((size_t) n * u), *dw = rnd ((size_t) u * k), *dx = rnd ((size_t) n * k);

  printf ("sgemm for Dense %d->%d, batch %d\n", k, u, n);
  TIME ("OpenBLAS  y = x W^T", 5, cblas_sgemm (CblasRowMajor, CblasNoTrans, CblasTrans, n, u, k, 1, x, k, w, k, 0, y, u));
  TIME ("OpenBLAS  dW = dy^T x", 5, cblas_sgemm (CblasRowMajor, CblasTrans, CblasNoTrans, u, k, n, 1, dy, u, x, k, 0, dw, k));
  TIME ("OpenBLAS  dx = dy W", 5, cblas_sgemm (CblasRowMajor, CblasNoTrans, CblasNoTrans, n, k, u, 1, dy, u, w, k, 0, dx, k));
  TIME ("oneDNN    y = x W^T", 5, dnnl_sgemm ('N', 'T', n, u, k, 1, x, k, w, k, 0, y, u));
  TIME ("oneDNN    dW = dy^T x", 5, dnnl_sgemm ('T', 'N', u, k, n, 1, dy, u, x, k, 0, dw, k));
  TIME ("oneDNN    dx = dy W", 5, dnnl_sgemm ('N', 'N', n, k, u, 1, dy, u, w, k, 0, dx, k));
  g_free (x), g_free (w), g_free (y), g_free (dy), g_free (dw), g_free (dx);
}

#define CK(x) G_STMT_START { if ((x) != dnnl_success) g_error ("%s failed", #x); } G_STMT_END

static dnnl_memory_t
mem (dnnl_engine_t eng, const dnnl_memory_desc_t *md)
{
  dnnl_memory_t m;
  float *p;
  CK (dnnl_memory_create (&m, md, eng, DNNL_MEMORY_ALLOCATE));
  /* fresh allocations may hold denormals or NaNs, which skew timings */
  CK (dnnl_memory_get_data_handle (m, (void **) &p));
  for (size_t i = 0; i < dnnl_memory_desc_get_size (md) / sizeof (float); i++)
    p[i] = (float) g_random_double_range (-1, 1);
  return m;
}

static const char *
impl (const_dnnl_primitive_desc_t pd)
{
  const char *s = "?";
  dnnl_primitive_desc_query (pd, dnnl_query_impl_info_str, 0, &s);
  return s;
}

static void
run (dnnl_stream_t s, dnnl_primitive_t p, int n, const dnnl_exec_arg_t *a)
{
  dnnl_primitive_execute (p, s, n, a);
  dnnl_stream_wait (s);
}

/* oneDNN's convolution, plain nchw/oihw or any (blocked) formats; for
 * blocked, the reorders from and to nchw that a plain-layout graph pays. */
typedef enum { PLAIN, BLOCKED, NHWC } Layout;

static void
bench_dnnl_conv (int n, int c, int h, int o, int k, Layout layout)
{
  dnnl_engine_t eng;
  dnnl_stream_t strm;
  int ho = h - k + 1;
  dnnl_dims_t sd = { n, c, h, h }, wd = { o, c, k, k }, bd = { o }, dd = { n, o, ho, ho };
  dnnl_dims_t st = { 1, 1 }, dl = { 0, 0 }, pad = { 0, 0 };
  dnnl_memory_desc_t s_md, w_md, b_md, d_md, s_a, w_a, d_a;
  dnnl_convolution_desc_t fd, bdd, bwd;
  dnnl_primitive_desc_t fpd, bdpd, bwpd, r1pd, r2pd;
  dnnl_primitive_t fp, bdp, bwp, r1, r2;
  dnnl_format_tag_t any = dnnl_format_tag_any;
  dnnl_format_tag_t act = layout == PLAIN ? dnnl_nchw : layout == NHWC ? dnnl_nhwc : any;
  gboolean blocked = layout != PLAIN;

  CK (dnnl_engine_create (&eng, dnnl_cpu, 0));
  CK (dnnl_stream_create (&strm, eng, dnnl_stream_default_flags));
  dnnl_memory_desc_init_by_tag (&s_md, 4, sd, dnnl_f32, dnnl_nchw);
  dnnl_memory_desc_init_by_tag (&w_md, 4, wd, dnnl_f32, dnnl_oihw);
  dnnl_memory_desc_init_by_tag (&b_md, 1, bd, dnnl_f32, dnnl_x);
  dnnl_memory_desc_init_by_tag (&d_md, 4, dd, dnnl_f32, dnnl_nchw);
  dnnl_memory_desc_init_by_tag (&s_a, 4, sd, dnnl_f32, act);
  dnnl_memory_desc_init_by_tag (&w_a, 4, wd, dnnl_f32, blocked ? any : dnnl_oihw);
  dnnl_memory_desc_init_by_tag (&d_a, 4, dd, dnnl_f32, act);
  CK (dnnl_dilated_convolution_forward_desc_init (&fd, dnnl_forward_training, dnnl_convolution_direct, &s_a, &w_a,
                                                  &b_md, &d_a, st, dl, pad, pad));
  CK (dnnl_primitive_desc_create (&fpd, &fd, NULL, eng, NULL));
  CK (dnnl_dilated_convolution_backward_data_desc_init (&bdd, dnnl_convolution_direct, &s_a, &w_a, &d_a, st, dl,
                                                        pad, pad));
  CK (dnnl_primitive_desc_create (&bdpd, &bdd, NULL, eng, fpd));
  CK (dnnl_dilated_convolution_backward_weights_desc_init (&bwd, dnnl_convolution_direct, &s_a, &w_a, &b_md, &d_a,
                                                           st, dl, pad, pad));
  CK (dnnl_primitive_desc_create (&bwpd, &bwd, NULL, eng, fpd));
  CK (dnnl_primitive_create (&fp, fpd));
  CK (dnnl_primitive_create (&bdp, bdpd));
  CK (dnnl_primitive_create (&bwp, bwpd));
  printf ("oneDNN conv %d->%d %dx%d on %dx%d, %s formats (%s / %s / %s)\n", c, o, k, k, h, h,
          layout == PLAIN ? "plain nchw" : layout == NHWC ? "nhwc" : "any (blocked)", impl (fpd), impl (bdpd),
          impl (bwpd));

#define MD(pd, q) dnnl_primitive_desc_query_md (pd, q, 0)
  {
    dnnl_memory_t fs = mem (eng, MD (fpd, dnnl_query_src_md)), fw = mem (eng, MD (fpd, dnnl_query_weights_md));
    dnnl_memory_t fb = mem (eng, &b_md), fdst = mem (eng, MD (fpd, dnnl_query_dst_md));
    dnnl_memory_t ds = mem (eng, MD (bdpd, dnnl_query_diff_src_md)), bw = mem (eng, MD (bdpd, dnnl_query_weights_md));
    dnnl_memory_t bdd_m = mem (eng, MD (bdpd, dnnl_query_diff_dst_md));
    dnnl_memory_t ws = mem (eng, MD (bwpd, dnnl_query_src_md)), dw = mem (eng, MD (bwpd, dnnl_query_diff_weights_md));
    dnnl_memory_t dbm = mem (eng, &b_md), wdd = mem (eng, MD (bwpd, dnnl_query_diff_dst_md));
    dnnl_memory_t ps = mem (eng, &s_md), pd = mem (eng, &d_md);
    dnnl_exec_arg_t fa[] = { { DNNL_ARG_SRC, fs }, { DNNL_ARG_WEIGHTS, fw }, { DNNL_ARG_BIAS, fb }, { DNNL_ARG_DST, fdst } };
    dnnl_exec_arg_t ba[] = { { DNNL_ARG_DIFF_SRC, ds }, { DNNL_ARG_WEIGHTS, bw }, { DNNL_ARG_DIFF_DST, bdd_m } };
    dnnl_exec_arg_t wa[] = { { DNNL_ARG_SRC, ws }, { DNNL_ARG_DIFF_WEIGHTS, dw }, { DNNL_ARG_DIFF_BIAS, dbm },
                             { DNNL_ARG_DIFF_DST, wdd } };
    TIME ("forward", 1, run (strm, fp, 4, fa));
    TIME ("backward data", 1, run (strm, bdp, 3, ba));
    TIME ("backward weights + bias", 1, run (strm, bwp, 4, wa));
    if (blocked)
      {
        dnnl_exec_arg_t a1[] = { { DNNL_ARG_FROM, ps }, { DNNL_ARG_TO, fs } };
        dnnl_exec_arg_t a2[] = { { DNNL_ARG_FROM, fdst }, { DNNL_ARG_TO, pd } };
        CK (dnnl_reorder_primitive_desc_create (&r1pd, &s_md, eng, MD (fpd, dnnl_query_src_md), eng, NULL));
        CK (dnnl_reorder_primitive_desc_create (&r2pd, MD (fpd, dnnl_query_dst_md), eng, &d_md, eng, NULL));
        CK (dnnl_primitive_create (&r1, r1pd));
        CK (dnnl_primitive_create (&r2, r2pd));
        TIME ("reorder data from nchw", 2, run (strm, r1, 2, a1));
        TIME ("reorder output to nchw", 2, run (strm, r2, 2, a2));
      }
  }
#undef MD
}

static void
bench_raw (void)
{
  printf ("== library alternatives, batch 128\n");
  bench_gemm (128, 784, 256);
  bench_gemm (128, 800, 500);
  for (Layout l = PLAIN; l <= NHWC; l++)
    {
      bench_dnnl_conv (128, 1, 28, 20, 5, l);
      bench_dnnl_conv (128, 20, 12, 50, 5, l);
    }
}

/* ---- PyTorch's F.linear / F.conv2d on the same shapes, timed the same way:
 * `bench-kernels 2 torch | python3 - 2` (the argument is the thread count) */

static const char torch_script[] =
  "import time, sys, torch, torch.nn.functional as F\n"
  "nt = int(sys.argv[1]) if len(sys.argv) > 1 else 2\n"
  "torch.set_num_threads(nt)\n"
  "N = 128\n"
  "BLOCKS = 40\n"
  "def bench(label, fn, reps):\n"
  "    for _ in range(3): fn()\n"
  "    best = 1e9\n"
  "    for _ in range(BLOCKS):\n"
  "        t = time.perf_counter()\n"
  "        for _ in range(reps): fn()\n"
  "        best = min(best, (time.perf_counter() - t) / reps)\n"
  "    print(f\"  {label:44s} {best*1e3:8.3f} ms\")\n"
  "\n"
  "def dense(label, k, u, first, reps):\n"
  "    x = torch.rand(N, k) * 2 - 1\n"
  "    x.requires_grad_(not first)\n"
  "    w = (torch.rand(u, k) * 2 - 1).requires_grad_()\n"
  "    b = (torch.rand(u) * 2 - 1).requires_grad_()\n"
  "    dy = torch.rand(N, u) * 2 - 1\n"
  "    print(label)\n"
  "    def fwd():\n"
  "        with torch.no_grad(): F.linear(x, w, b)\n"
  "    y = F.linear(x, w, b)\n"
  "    def bwd():\n"
  "        torch.autograd.grad(y, [w, b] if first else [x, w, b], dy, retain_graph=True)\n"
  "    def fb():\n"
  "        yy = F.linear(x, w, b)\n"
  "        torch.autograd.grad(yy, [w, b] if first else [x, w, b], dy)\n"
  "    bench(\"forward\", fwd, reps)\n"
  "    bench(\"backward\" + (\" (no d(data))\" if first else \"\"), bwd, reps)\n"
  "    bench(\"forward + backward\", fb, reps)\n"
  "\n"
  "def conv(label, c, h, o, first, reps):\n"
  "    x = torch.rand(N, c, h, h) * 2 - 1\n"
  "    x.requires_grad_(not first)\n"
  "    w = (torch.rand(o, c, 5, 5) * 2 - 1).requires_grad_()\n"
  "    b = (torch.rand(o) * 2 - 1).requires_grad_()\n"
  "    dy = torch.rand(N, o, h - 4, h - 4) * 2 - 1\n"
  "    print(label)\n"
  "    def fwd():\n"
  "        with torch.no_grad(): F.conv2d(x, w, b)\n"
  "    y = F.conv2d(x, w, b)\n"
  "    def bwd():\n"
  "        torch.autograd.grad(y, [w, b] if first else [x, w, b], dy, retain_graph=True)\n"
  "    def fb():\n"
  "        yy = F.conv2d(x, w, b)\n"
  "        torch.autograd.grad(yy, [w, b] if first else [x, w, b], dy)\n"
  "    bench(\"forward\", fwd, reps)\n"
  "    bench(\"backward\" + (\" (no d(data))\" if first else \"\"), bwd, reps)\n"
  "    bench(\"forward + backward\", fb, reps)\n"
  "\n"
  "print(f\"PyTorch {torch.__version__}, threads: {torch.get_num_threads()}\")\n"
  "dense(\"Dense 784->256 (MLP fc1)\", 784, 256, True, 10)\n"
  "dense(\"Dense 256->10 (MLP fc2)\", 256, 10, False, 20)\n"
  "conv(\"Conv2D 1->20 5x5 on 28x28 (LeNet conv1)\", 1, 28, 20, True, 2)\n"
  "conv(\"Conv2D 20->50 5x5 on 12x12 (LeNet conv2)\", 20, 12, 50, False, 1)\n"
  "dense(\"Dense 800->500 (LeNet fc1)\", 800, 500, False, 5)\n"
  "dense(\"Dense 500->10 (LeNet fc2)\", 500, 10, False, 20)\n";

int
main (int argc, char **argv)
{
  int threads = argc > 1 ? atoi (argv[1]) : 2;
  const char *what = argc > 2 ? argv[2] : "all";

  only = argc > 3 ? argv[3] : NULL;

  if (strcmp (what, "torch") == 0)
    {
      fputs (torch_script, stdout);
      return 0;
    }
  setvbuf (stdout, NULL, _IOLBF, 0);
  use_cpu_time = g_strcmp0 (g_getenv ("NL_BENCH_CPUTIME"), "1") == 0;
  if (g_getenv ("NL_BENCH_BLOCKS"))
    blocks = MAX (1, atoi (g_getenv ("NL_BENCH_BLOCKS")));
  nl_threads_set (threads);
  printf ("threads: %d, %s time\n", nl_threads_get (), use_cpu_time ? "CPU" : "wall");
  if (strcmp (what, "raw") != 0)
    bench_ops ();
  if (strcmp (what, "ops") != 0)
    bench_raw ();
  return 0;
}
