/* nl-record.h — record files (the MXNet RecordIO layout), the format
 * packed datasets are stored in: its framing and constants. Writing them:
 * nl-record-writer.h; reading them from anywhere in a file:
 * nl-record-reader.h; packed datasets and their sample records:
 * nl-packed-dataset.h.
 *
 * Record framing (all words uint32 little-endian, every part starts at a
 * 4-byte-aligned file offset):
 *
 *   magic   0xced7230a
 *   lrecord (cflag << 29) | length      length < 2^29, cflag in bits 29-30:
 *                                       0 whole record, 1 first part,
 *                                       2 middle part, 3 last part
 *   payload `length` bytes
 *   padding zero bytes up to a multiple of 4 (after the last part only;
 *           earlier parts have lengths that are multiples of 4)
 *
 * As in MXNet, the writer never lets the magic word appear at an aligned
 * position inside a payload: where it would, the record is split there,
 * the word is left out, and a reader joining the parts puts it back. So an
 * aligned magic word in a file is always a part header, and a reader can
 * start at any byte, scan forward for the magic at 4-byte alignment, skip
 * continuation parts (cflag 2, 3) and be in step at the next record.
 * Payloads longer than the maximum part length (2^29 - 4 bytes, settable
 * for tests) are also split; such a cut has bit 31 of lrecord set on the
 * part before it, meaning "no magic word between this part and the next"
 * (MXNet cannot write records this long and leaves bit 31 zero). A reader
 * given the byte range [begin, end) returns exactly the records whose first
 * part starts in it, so N readers over N adjacent ranges read every record
 * once, with no index. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define NL_RECORD_MAGIC 0xced7230au
/* The longest part: the length field has 29 bits, and parts other than
 * the last must be a multiple of 4 long. */
#define NL_RECORD_MAX_PART ((guint32) ((1u << 29) - 4))

G_END_DECLS
