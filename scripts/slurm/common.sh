# shellcheck shell=bash
# Sourced by the sbatch templates in scripts/slurm/: where railbench is, where results go, extra arguments.
#
# RB_SRC      railbench source tree (default: the directory sbatch was run from)
# RB_BIN      the railbench binary (default: railbench in PATH, else RB_SRC/build/railbench)
# RB_RESULTS  directory of result directories, on a shared or node-local filesystem
#             (default: RB_SRC/railbench-results); each job writes RB_RESULTS/JOBNAME-JOBID
# RB_ARGS     more railbench options, split on blanks (no quoting: use --config FILE.json for values with blanks)
# Credentials (AWS_*, AIS_AUTHN_TOKEN) reach the ranks through the job's environment, never arguments.
set -euo pipefail

rb_die() { echo "${SLURM_JOB_NAME:-sbatch}: $*" >&2; exit 2; }

[ -n "${SLURM_JOB_ID:-}" ] || rb_die "run me with sbatch (no SLURM_JOB_ID)"
RB_SRC=${RB_SRC:-${SLURM_SUBMIT_DIR:-$PWD}}
RB_BIN=${RB_BIN:-$(command -v railbench || echo "$RB_SRC/build/railbench")}
[ -x "$RB_BIN" ] || rb_die "no railbench at $RB_BIN; set RB_BIN or RB_SRC"
RB_RESULTS=${RB_RESULTS:-$RB_SRC/railbench-results}
rb_out=$RB_RESULTS/$SLURM_JOB_NAME-$SLURM_JOB_ID
# shellcheck disable=SC2034 # rb_out and rb_args are for the templates that source this file
read -r -a rb_args <<<"${RB_ARGS:-}"
# rb_srun ARGS...: srun with PMIx (Debian's Open MPI 4.1 has no PMI-2 client; see docs/many-hosts.md).
rb_srun() { srun --mpi=pmix "$@"; }
echo "$SLURM_JOB_NAME: job $SLURM_JOB_ID on $SLURM_JOB_NODELIST, ${SLURM_NTASKS:-?} tasks; results in $rb_out" >&2
