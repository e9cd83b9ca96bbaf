/* nl-cuda-rand.cuh — the counter-based uniform draw of core/nl-random.c on
 * the device, bit for bit: the kernels that drop elements (Dropout,
 * MultiHeadAttention's dropout on its weights) keep the very elements the
 * CPU keeps. Included by .cu files only.
 *
 * (h >> 40) < 2^24 converts to float exactly and the scale by 2^-24 is
 * exact. The per-launch part of the hash's argument, seed ^ mix64 (step +
 * golden), is the same for every element and is computed once on the host
 * (rand_key; XOR is associative, so the argument is unchanged). */
#pragma once

namespace {

/* nl_mix64: the splitmix64 finaliser, bit for bit. */
__host__ __device__ inline unsigned long long
mix64 (unsigned long long z)
{
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* The key of nl_rand_uniform (seed, stream, ...) */
__host__ __device__ inline unsigned long long
rand_key (unsigned long long seed, unsigned long long stream)
{
  return seed ^ mix64 (stream + 0x9e3779b97f4a7c15ULL);
}

/* nl_rand_uniform (seed, stream, index) given key = rand_key (seed, stream). */
__host__ __device__ inline float
rand_uniform (unsigned long long key, unsigned long long index)
{
  unsigned long long h = mix64 (key ^ mix64 (index * 0xd1342543de82ef95ULL + 1));
  return (float) (h >> 40) * (1.0f / 16777216.0f);
}

} // namespace
