/* railbench load meta: the metadata workload (mdtest's phases) over a tree of directories x files. */
#ifndef RB_META_INT_H
#define RB_META_INT_H

/* The command's entry point (argv[0] = "meta"). Returns the exit status. Main thread. */
int rb_load_meta_main(int argc, char **argv);

#endif
