/* nl-fault-vfs.c — a counting, failing VFS over SQLite's default one. */
#include "nl-fault-vfs.h"

#include <errno.h>
#include <sqlite3.h>
#include <string.h>

/* Our file: the real one follows in the same allocation (szOsFile). */
typedef struct {
  sqlite3_file base;
  sqlite3_file *real;
} FaultFile;

static sqlite3_vfs fault_vfs;
static sqlite3_vfs *real_vfs;
static GMutex lock;
static int counts[NL_FAULT_N_KINDS];
static int armed_kind = -1, armed_n, armed_rc, fired;
static gboolean armed_persistent;

/* Counts a call of KIND; returns the result code to fail it with, or SQLITE_OK. */
static int
fault_hit (NlFaultKind kind)
{
  int rc = SQLITE_OK;
  g_mutex_lock (&lock);
  int n = ++counts[kind];
  if ((int) kind == armed_kind && (n == armed_n || (armed_persistent && n > armed_n)))
    {
      rc = armed_rc;
      fired++;
    }
  g_mutex_unlock (&lock);
  return rc;
}

#define REAL(f) (((FaultFile *) (f))->real)

static int
f_close (sqlite3_file *f)
{
  return REAL (f)->pMethods ? REAL (f)->pMethods->xClose (REAL (f)) : SQLITE_OK;
}

static int
f_read (sqlite3_file *f, void *buf, int n, sqlite3_int64 off)
{
  return REAL (f)->pMethods->xRead (REAL (f), buf, n, off);
}

static int
f_write (sqlite3_file *f, const void *buf, int n, sqlite3_int64 off)
{
  int rc = fault_hit (NL_FAULT_WRITE);
  if (rc != SQLITE_OK)
    {
      errno = rc == SQLITE_FULL ? ENOSPC : EIO;
      return rc;
    }
  return REAL (f)->pMethods->xWrite (REAL (f), buf, n, off);
}

static int
f_truncate (sqlite3_file *f, sqlite3_int64 size)
{
  return REAL (f)->pMethods->xTruncate (REAL (f), size);
}

static int
f_sync (sqlite3_file *f, int flags)
{
  int rc = fault_hit (NL_FAULT_SYNC);
  return rc != SQLITE_OK ? rc : REAL (f)->pMethods->xSync (REAL (f), flags);
}

static int
f_file_size (sqlite3_file *f, sqlite3_int64 *size)
{
  return REAL (f)->pMethods->xFileSize (REAL (f), size);
}

static int
f_lock (sqlite3_file *f, int level)
{
  return REAL (f)->pMethods->xLock (REAL (f), level);
}

static int
f_unlock (sqlite3_file *f, int level)
{
  return REAL (f)->pMethods->xUnlock (REAL (f), level);
}

static int
f_check_reserved_lock (sqlite3_file *f, int *out)
{
  return REAL (f)->pMethods->xCheckReservedLock (REAL (f), out);
}

static int
f_file_control (sqlite3_file *f, int op, void *arg)
{
  return REAL (f)->pMethods->xFileControl (REAL (f), op, arg);
}

static int
f_sector_size (sqlite3_file *f)
{
  return REAL (f)->pMethods->xSectorSize (REAL (f));
}

static int
f_device_characteristics (sqlite3_file *f)
{
  return REAL (f)->pMethods->xDeviceCharacteristics (REAL (f));
}

/* The WAL index (shared memory) and memory mapping pass straight through. */
static int
f_shm_map (sqlite3_file *f, int pg, int pgsz, int extend, void volatile **pp)
{
  return REAL (f)->pMethods->xShmMap (REAL (f), pg, pgsz, extend, pp);
}

static int
f_shm_lock (sqlite3_file *f, int offset, int n, int flags)
{
  return REAL (f)->pMethods->xShmLock (REAL (f), offset, n, flags);
}

static void
f_shm_barrier (sqlite3_file *f)
{
  REAL (f)->pMethods->xShmBarrier (REAL (f));
}

static int
f_shm_unmap (sqlite3_file *f, int delete_flag)
{
  return REAL (f)->pMethods->xShmUnmap (REAL (f), delete_flag);
}

static int
f_fetch (sqlite3_file *f, sqlite3_int64 off, int n, void **pp)
{
  return REAL (f)->pMethods->xFetch (REAL (f), off, n, pp);
}

static int
f_unfetch (sqlite3_file *f, sqlite3_int64 off, void *p)
{
  return REAL (f)->pMethods->xUnfetch (REAL (f), off, p);
}

static const sqlite3_io_methods fault_methods = {
  3, f_close, f_read, f_write, f_truncate, f_sync, f_file_size, f_lock, f_unlock, f_check_reserved_lock,
  f_file_control, f_sector_size, f_device_characteristics, f_shm_map, f_shm_lock, f_shm_barrier,
  f_shm_unmap, f_fetch, f_unfetch,
};

static int
v_open (sqlite3_vfs *vfs, const char *name, sqlite3_file *file, int flags, int *out_flags)
{
  (void) vfs;
  FaultFile *ff = (FaultFile *) file;
  ff->base.pMethods = NULL;
  ff->real = (sqlite3_file *) (ff + 1);
  ff->real->pMethods = NULL;
  int rc = fault_hit (NL_FAULT_OPEN);
  if (rc != SQLITE_OK)
    return rc;
  rc = real_vfs->xOpen (real_vfs, name, ff->real, flags, out_flags);
  /* SQLite calls xClose only when pMethods is set: set it whenever the
   * real file needs closing too. */
  if (ff->real->pMethods)
    ff->base.pMethods = &fault_methods;
  return rc;
}

static int
v_delete (sqlite3_vfs *vfs, const char *name, int sync_dir)
{
  (void) vfs;
  return real_vfs->xDelete (real_vfs, name, sync_dir);
}

static int
v_access (sqlite3_vfs *vfs, const char *name, int flags, int *out)
{
  (void) vfs;
  return real_vfs->xAccess (real_vfs, name, flags, out);
}

static int
v_full_pathname (sqlite3_vfs *vfs, const char *name, int n, char *out)
{
  (void) vfs;
  return real_vfs->xFullPathname (real_vfs, name, n, out);
}

static int
v_randomness (sqlite3_vfs *vfs, int n, char *out)
{
  (void) vfs;
  return real_vfs->xRandomness (real_vfs, n, out);
}

static int
v_sleep (sqlite3_vfs *vfs, int us)
{
  (void) vfs;
  return real_vfs->xSleep (real_vfs, us);
}

static int
v_current_time (sqlite3_vfs *vfs, double *out)
{
  (void) vfs;
  return real_vfs->xCurrentTime (real_vfs, out);
}

static int
v_get_last_error (sqlite3_vfs *vfs, int n, char *out)
{
  (void) vfs;
  return real_vfs->xGetLastError ? real_vfs->xGetLastError (real_vfs, n, out) : 0;
}

static int
v_current_time_int64 (sqlite3_vfs *vfs, sqlite3_int64 *out)
{
  (void) vfs;
  return real_vfs->xCurrentTimeInt64 (real_vfs, out);
}

void
nl_fault_vfs_install (void)
{
  static gsize done;
  if (!g_once_init_enter (&done))
    return;
  g_assert_cmpint (sqlite3_initialize (), ==, SQLITE_OK);
  real_vfs = sqlite3_vfs_find (NULL);
  g_assert_nonnull (real_vfs);
  g_assert_cmpint (real_vfs->iVersion, >=, 2);
  fault_vfs = (sqlite3_vfs) {
    .iVersion = 2,
    .szOsFile = (int) sizeof (FaultFile) + real_vfs->szOsFile,
    .mxPathname = real_vfs->mxPathname,
    .zName = "nl-fault",
    .xOpen = v_open,
    .xDelete = v_delete,
    .xAccess = v_access,
    .xFullPathname = v_full_pathname,
    .xRandomness = v_randomness,
    .xSleep = v_sleep,
    .xCurrentTime = v_current_time,
    .xGetLastError = v_get_last_error,
    .xCurrentTimeInt64 = v_current_time_int64,
  };
  g_assert_cmpint (sqlite3_vfs_register (&fault_vfs, 1), ==, SQLITE_OK);
  g_once_init_leave (&done, 1);
}

static void
arm (int kind, int n, int rc, gboolean persistent)
{
  g_mutex_lock (&lock);
  memset (counts, 0, sizeof counts);
  armed_kind = kind;
  armed_n = n;
  armed_rc = rc;
  armed_persistent = persistent;
  fired = 0;
  g_mutex_unlock (&lock);
}

void
nl_fault_vfs_arm (NlFaultKind kind, int n, int rc, gboolean persistent)
{
  g_return_if_fail (kind < NL_FAULT_N_KINDS && n >= 1 && rc != SQLITE_OK);
  arm (kind, n, rc, persistent);
}

void
nl_fault_vfs_reset (void)
{
  arm (-1, 0, SQLITE_OK, FALSE);
}

int
nl_fault_vfs_count (NlFaultKind kind)
{
  g_mutex_lock (&lock);
  int n = counts[kind];
  g_mutex_unlock (&lock);
  return n;
}

int
nl_fault_vfs_fired (void)
{
  g_mutex_lock (&lock);
  int n = fired;
  g_mutex_unlock (&lock);
  return n;
}

const char *
nl_fault_kind_name (NlFaultKind kind)
{
  static const char *const names[] = { "open", "write", "sync" };
  return kind < NL_FAULT_N_KINDS ? names[kind] : "?";
}
