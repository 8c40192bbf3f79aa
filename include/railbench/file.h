/* Whole files: read one into memory, write one atomically, make a directory path. */
#ifndef RB_FILE_H
#define RB_FILE_H

#include <stddef.h>

/*
 * Reads the whole file at path into a new NUL-terminated buffer (*data, the
 * caller frees; *len excludes the NUL). Returns 0, -EFBIG when the file holds
 * more than max_bytes, or another -errno (-ENOMEM, -ENOENT, -EISDIR ...).
 * Thread-safe.
 */
int rb_file_read(const char *path, size_t max_bytes, char **data, size_t *len);

/*
 * Writes len bytes to path through a new temporary file beside it
 * ("path.tmp.PID.N", created with O_EXCL: never one that exists), fsync(2)
 * and rename(2), so a reader sees the old file or the whole new one. A path
 * that is a link to a regular file replaces the file it names and keeps the
 * link; a path that is a device, FIFO or socket (-o /dev/null) is written
 * into, never replaced. Returns 0 or -errno (the temporary file is removed
 * on failure). Thread-safe.
 */
int rb_file_write_atomic(const char *path, const void *data, size_t len);

/* Creates dir and its missing parents (mode 0755). Returns 0 or -errno. */
int rb_file_mkdir_p(const char *dir);

/*
 * Removes everything inside dir (files, links and directories), keeping dir
 * itself. No link is followed: a link is unlinked, and a directory is entered
 * through openat(O_NOFOLLOW) from its parent, so one swapped for a link while
 * it runs is not entered. Returns 0 or -errno.
 */
int rb_file_clear_dir(const char *dir);

#endif
