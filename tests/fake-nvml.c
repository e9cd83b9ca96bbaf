/* fake-nvml.c — a stand-in for libnvidia-ml.so.1 (test-profile opens it
 * through NETLOOM_NVML_LIBRARY): one GPU, 42 % busy, 1.5 GiB of 80 in use;
 * index 1 is not there. Only what core/nl-system-stats.c looks up. */
typedef struct {
  unsigned int gpu, memory;
} Utilization;
typedef struct {
  unsigned long long total, free, used;
} Memory;

static int device0;

int
nvmlInit_v2 (void)
{
  return 0;
}

int
nvmlDeviceGetHandleByIndex_v2 (unsigned int index, void **device)
{
  if (index != 0)
    return 2; /* NVML_ERROR_INVALID_ARGUMENT */
  *device = &device0;
  return 0;
}

int
nvmlDeviceGetUtilizationRates (void *device, Utilization *u)
{
  if (device != &device0)
    return 2;
  u->gpu = 42;
  u->memory = 7;
  return 0;
}

int
nvmlDeviceGetMemoryInfo (void *device, Memory *m)
{
  if (device != &device0)
    return 2;
  m->total = 80ull << 30;
  m->used = 3ull << 29;
  m->free = m->total - m->used;
  return 0;
}
