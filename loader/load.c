/* railbench load: the dispatcher, the one file that names every load subcommand (each in its sub-folder). */
#include "ckpt/ckpt_int.h"
#include "cmd/loader_int.h"
#include "cmd/sweep_int.h"
#include "file/meta_int.h"
#include "railbench/command.h"
#include "kvcache/kvcache_int.h"
#include "tiers/tiers_int.h"
#include "train/train_int.h"

int rb_load_main(int argc, char **argv)
{
    static const struct rb_subcommand subs[] = {
        {"put", "PUT N seeded objects (payload verifiable by get --verify)", rb_load_put_main},
        {"get", "GET objects: random, sequential or epoch order; closed or open loop", rb_load_get_main},
        {"delete", "DELETE objects once each: N names, a list, or everything under --prefix (cleanup)", rb_load_delete_main},
        {"stat", "HEAD objects (warp's STAT): random, sequential or epoch order", rb_load_stat_main},
        {"mixed", "warp-like mix of GET, PUT, DELETE and STAT by weight over a working set put first", rb_load_mixed_main},
        {"list", "list a bucket or prefix page by page: pages/s, names/s, latency per page", rb_load_list_main},
        {"meta", "mdtest's metadata phases on a directory: mkdir, create, stat, read, rename, unlink, rmdir per second",
         rb_load_meta_main},
        {"tiers", "direct, cold and warm GETs through a caching tier in one run, verified, as one table", rb_load_tiers_main},
        {"sweep", "one GET phase per in-flight or rate step; throughput, latency and the knee", rb_load_sweep_main},
        {"train", "emulate training epochs: accelerator utilisation (AU) and samples/s, MLPerf Storage style",
         rb_load_train_main},
        {"checkpoint", "MLPerf Storage checkpoints: every rank writes its model and optimizer shards, then reads "
         "another's; duration = slowest rank", rb_load_checkpoint_main},
        {"kvcache", "MLPerf Storage KV-cache offload: users' turns write and read KV entries (NumPy files or objects); "
         "device and host time apart", rb_load_kvcache_main},
        {NULL, NULL, NULL},
    };
    return rb_dispatch("railbench load", subs, argc, argv);
}
