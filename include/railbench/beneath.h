/* Names resolved beneath a directory: never through a symbolic link, never outside it. */
#ifndef RB_BENEATH_H
#define RB_BENEATH_H

#include <dirent.h>
#include <stdbool.h>
#include <sys/stat.h>

/*
 * Every call takes root, a directory descriptor (rb_beneath_root), and a
 * relative name ("a/b/file"; empty and "." components are skipped). The
 * name is resolved component by component beneath root: a symbolic link
 * met anywhere (a directory on the way or the leaf itself), a ".."
 * component or a leading '/' ends the call with -RB_BENEATH_LINK and
 * nothing is opened, created or removed. The kernel's openat2 with
 * RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS does the resolution where it has
 * it (found out once per process); elsewhere a walk opens each directory
 * with O_NOFOLLOW | O_DIRECTORY and the leaf with O_NOFOLLOW. Each call
 * returns a descriptor or 0, else -errno. Thread-safe.
 */

/* The one errno a symbolic link (or a name leading outside the root) is reported as. */
#define RB_BENEATH_LINK ELOOP

/*
 * Opens the directory at path as the root names are resolved beneath. The
 * path itself is the user's and is resolved as given, symbolic links
 * included, once. Returns a descriptor (O_PATH, close-on-exec) or -errno.
 */
int rb_beneath_root(const char *path);

/*
 * Opens name with flags (O_CLOEXEC and O_NOFOLLOW added) and mode (with
 * O_CREAT). With O_CREAT | O_EXCL a symbolic link at the name is
 * -RB_BENEATH_LINK, not -EEXIST. Returns the descriptor or -errno.
 */
int rb_beneath_open(int root, const char *name, int flags, mode_t mode);

/*
 * Opens name for writing as a new file in place of what is there: a
 * regular file at the name is unlinked first (its inode, which a hard link
 * may share with a file elsewhere, is never written), then the name is
 * created with O_CREAT | O_EXCL. flags add to O_WRONLY (O_DIRECT). A
 * symbolic link at the name is -RB_BENEATH_LINK, a directory -EISDIR, a
 * FIFO, socket or device -EEXIST (left as it is, never opened).
 * Returns the descriptor or -errno.
 */
int rb_beneath_replace(int root, const char *name, int flags, mode_t mode);

/* Makes the directories leading to name's last component (mkdir -p, mode 0755). Returns 0 or -errno. */
int rb_beneath_mkdirs(int root, const char *name);

/* mkdir of name itself. Returns 0 or -errno (-EEXIST when something is there). */
int rb_beneath_mkdir(int root, const char *name, mode_t mode);

/* Removes the file at name (a symbolic link there: -RB_BENEATH_LINK, left in place). Returns 0 or -errno. */
int rb_beneath_unlink(int root, const char *name);

/* Removes the empty directory at name. Returns 0 or -errno. */
int rb_beneath_rmdir(int root, const char *name);

/* stat of name without following it: a symbolic link there is -RB_BENEATH_LINK. Returns 0 or -errno. */
int rb_beneath_stat(int root, const char *name, struct stat *st);

/*
 * Renames from to to, both beneath root (renameat2 flags: RENAME_NOREPLACE
 * where the file system has it, else a link and an unlink that never
 * replace). A symbolic link at from is -RB_BENEATH_LINK; one at to is
 * replaced as a name, never followed. Returns 0 or -errno.
 */
int rb_beneath_rename(int root, const char *from, const char *to, unsigned flags);

/* Opens the directory at name for reading ("" or "." is root itself). Returns 0 with *out, or -errno. */
int rb_beneath_opendir(int root, const char *name, DIR **out);

/*
 * Whether calls use openat2 (true) or the walk (false): a test's way to run
 * the walk where the kernel has openat2. true on a kernel without openat2
 * still walks. Not for use while other threads resolve names.
 */
void rb_beneath_use_openat2(bool on);

/* Whether calls resolve with openat2 now (the kernel has it and rb_beneath_use_openat2 left it on). */
bool rb_beneath_has_openat2(void);

#endif
