#!/usr/bin/env bash
# Launcher wrapper for mpirun: binds local rank i's MPI TCP traffic to rail i's interface, then runs the program.
#
# Usage: mpirun ... scripts/rail-bind.sh [--ifaces IF0,IF1,...] PROGRAM [ARGS...]
#
# Rail interfaces, in rail order: --ifaces, else $RB_RAIL_IFACES, else this host's interfaces
# named rail0, rail1, ... (as scripts/cluster.sh makes them). Local rank i (from
# OMPI_COMM_WORLD_LOCAL_RANK, or SLURM_LOCALID under srun, or MPI_LOCALRANKID under MPICH)
# gets interface i modulo their number: Open MPI's TCP transport of that rank then opens and
# accepts connections on that interface only, so same-local-rank peers on different hosts talk
# on their shared rail and nothing else crosses the spine. Exports RB_RAIL and RB_RAIL_IFACE
# for the program, and prints the binding to stderr with RB_RAIL_VERBOSE=1.
set -euo pipefail

die_usage() { echo "rail-bind.sh: $*" >&2; exit 2; }

ifaces=${RB_RAIL_IFACES:-}
if [ "${1:-}" = --ifaces ]; then
    [ "$#" -ge 2 ] || die_usage "--ifaces needs a value such as rail0,rail1"
    ifaces=$2
    shift 2
fi
[ "$#" -ge 1 ] || die_usage "missing PROGRAM; usage: rail-bind.sh [--ifaces IF0,IF1,...] PROGRAM [ARGS...]"

if [ -z "$ifaces" ]; then
    found=()
    for i in $(seq 0 63); do
        [ -e "/sys/class/net/rail$i" ] || break
        found+=("rail$i")
    done
    [ "${#found[@]}" -gt 0 ] || die_usage "no --ifaces, no RB_RAIL_IFACES and no rail0 interface on $(hostname)"
    ifaces=$(IFS=,; echo "${found[*]}")
fi
IFS=, read -r -a list <<<"$ifaces"
[ "${#list[@]}" -gt 0 ] || die_usage "--ifaces '$ifaces': expected a comma-separated list of interfaces"

local_rank=${OMPI_COMM_WORLD_LOCAL_RANK:-${SLURM_LOCALID:-${MPI_LOCALRANKID:-}}}
[[ $local_rank =~ ^[0-9]+$ ]] ||
    die_usage "no local rank in the environment (OMPI_COMM_WORLD_LOCAL_RANK, SLURM_LOCALID or MPI_LOCALRANKID); run me under mpirun or srun"

rail=$((local_rank % ${#list[@]}))
iface=${list[$rail]}
[ -e "/sys/class/net/$iface" ] || die_usage "rail $rail interface '$iface' does not exist on $(hostname)"

# An include list and an exclude list together are an error in Open MPI; the include wins here.
unset OMPI_MCA_btl_tcp_if_exclude
export OMPI_MCA_btl_tcp_if_include=$iface RB_RAIL=$rail RB_RAIL_IFACE=$iface
[ "${RB_RAIL_VERBOSE:-0}" = 0 ] || echo "rail-bind.sh: $(hostname) local rank $local_rank -> rail $rail ($iface)" >&2
exec "$@"
