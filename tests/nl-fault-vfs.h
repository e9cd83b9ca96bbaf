/* nl-fault-vfs.h — SQLite's fault injection (its test_vfs / test_devsym
 * way) for the project store's tests: a VFS that wraps the default one
 * ("unix"), counts every xOpen, xWrite and xSync, and fails the Nth call of
 * one kind with a chosen result code. Installed as the default VFS of the
 * test process, so the project code runs unchanged on top of it.
 *
 * A fault is transient (only the Nth call fails, as an I/O error that goes
 * away) or persistent (the Nth and every later call of that kind fail, as a
 * full disk does). Thread-safe: the metric writer writes from its thread. */
#pragma once

#include <glib.h>

typedef enum {
  NL_FAULT_OPEN,
  NL_FAULT_WRITE,
  NL_FAULT_SYNC,
  NL_FAULT_N_KINDS
} NlFaultKind;

/* Registers the VFS as SQLite's default (once; later calls do nothing). */
void nl_fault_vfs_install (void);
/* Disarms and zeroes the counts. */
void nl_fault_vfs_reset (void);
/* Fails the Nth (1-based) call of KIND from now on with RC (an SQLite result
 * code, e.g. SQLITE_FULL, SQLITE_IOERR_WRITE, SQLITE_IOERR_FSYNC,
 * SQLITE_CANTOPEN); zeroes the counts. */
void nl_fault_vfs_arm (NlFaultKind kind, int n, int rc, gboolean persistent);
/* Calls of KIND since the last reset or arm. */
int nl_fault_vfs_count (NlFaultKind kind);
/* How many calls the armed fault has failed. */
int nl_fault_vfs_fired (void);
const char *nl_fault_kind_name (NlFaultKind kind);
