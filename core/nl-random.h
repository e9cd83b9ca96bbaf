/* nl-random.h — counter-based random numbers: the same (seed, stream,
 * index) always gives the same value, whatever the thread count or device. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* splitmix64's finaliser: a bijective, well-mixed hash of 64 bits. */
guint64 nl_mix64 (guint64 z);
/* Uniform in [0, 1). */
float nl_rand_uniform (guint64 seed, guint64 stream, guint64 index);

G_END_DECLS
