/* Subcommands of railbench fabric (internal to fabric/). */
#ifndef RB_FABRIC_INT_H
#define RB_FABRIC_INT_H

int rb_fabric_counters(int argc, char **argv);

#endif
