/* The transports' registry: the RB_TRANSPORT rows every linked-in file put in a linker section, and the choice. */
#include <stddef.h>

#include "worker_int.h"

/* The entries RB_TRANSPORT put in section rb_transports, from every transport's file linked in. */
extern const struct rb_transport *const __start_rb_transports[], *const __stop_rb_transports[];

const struct rb_transport *rb_transport_for(const struct rb_load_opts *o, bool fetcher)
{
    if (o->transport)
        return o->transport;
    /* The linker's bounds of one section: the rows' fits exclude each other, so their order does not matter. */
    for (const struct rb_transport *const *t = __start_rb_transports; t < __stop_rb_transports; t++)
        if ((*t)->fits(o, fetcher))
            return *t;
    return NULL;
}

const char *rb_engine_name(const struct rb_load_opts *o)
{
    const struct rb_transport *tp = rb_transport_for(o, false);
    return tp ? tp->name : "none";
}

const char *rb_engine_io_loop_name(const struct rb_load_opts *o)
{
    const struct rb_transport *tp = rb_transport_for(o, false);
    return tp ? tp->io_loop : NULL;
}
