/* The error classes of the object loads: the one list the engine counts requests by and reports read back. */
#ifndef RB_LOAD_ERRORS_H
#define RB_LOAD_ERRORS_H

/*
 * X(KIND, name): in the order of result.json's errors object (after
 * "total") and of every table's error columns. The engine's enum
 * rb_load_err (loader/engine/engine_int.h), its names (transfer.c) and
 * report's columns (reports/kind_load.c) are made from it.
 */
#define RB_LOAD_ERR_LIST(X)                                                        \
    X(CONNECT, connect)                                                            \
    X(TIMEOUT, timeout)                                                            \
    X(RESET, reset)                                                                \
    X(HTTP_4XX, http_4xx)                                                          \
    X(HTTP_5XX, http_5xx)                                                          \
    X(SHORT_READ, short_read)                                                      \
    X(CHECKSUM, checksum)                                                          \
    X(REDIRECTS, too_many_redirects)                                               \
    /* file://: a symbolic link (or a way out of the target) at a name: refused, never followed */ \
    X(SYMLINK, symlink)                                                            \
    X(OTHER, other)                                                                \
    /* still in flight (or due, open loop) when a timed phase ended and --timeout ran out */ \
    X(ABANDONED, abandoned)

/* The names alone, as string literals in list order: {RB_LOAD_ERR_NAMES} initialises an array of them. */
#define RB_LOAD_ERR_NAME(K, name) #name,
#define RB_LOAD_ERR_NAMES RB_LOAD_ERR_LIST(RB_LOAD_ERR_NAME)

#endif
