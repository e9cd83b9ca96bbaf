/* nl-random.c — counter-based random numbers (nl-random.h). */
#include "core/nl-random.h"

guint64
nl_mix64 (guint64 z)
{
  /* splitmix64 finaliser: a good bijective hash of the counter */
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

float
nl_rand_uniform (guint64 seed, guint64 stream, guint64 index)
{
  guint64 h = nl_mix64 (seed ^ nl_mix64 (stream + 0x9e3779b97f4a7c15ULL) ^ nl_mix64 (index * 0xd1342543de82ef95ULL + 1));
  return (float) (h >> 40) * (1.0f / 16777216.0f);
}
