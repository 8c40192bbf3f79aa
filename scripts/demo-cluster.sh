#!/usr/bin/env bash
# make demo-cluster: a cluster in a box (2 clients x 2 rails, tier, slow backend), runs across it by mpirun and Ansible, reports, takes it down.
# Needs root. RB_DEMO_NET picks the subnet (default 10.77) if that one is taken on this machine.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
RB=$here/build/railbench
CL=("$here/scripts/cluster.sh" --name demo)
out=railbench-results/demo-cluster-$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out"

[ "$(id -u)" -eq 0 ] || { echo "demo-cluster.sh: needs root (network namespaces, sshd)" >&2; exit 3; }
trap '"${CL[@]}" down >/dev/null 2>&1 || true' EXIT

echo "== cluster up: 2 clients with 2 rails each, a tier and a backend behind a slow link"
"${CL[@]}" up --clients 2 --rails 2 --net "${RB_DEMO_NET:-10.77}"
"${CL[@]}" status
TIER=$("${CL[@]}" path tier_url)
BACKEND=$("${CL[@]}" path backend_url)
ORIGIN=$("${CL[@]}" path origin_root)
echo

# The steps, in order. Each runs across the cluster's clients and writes railbench result
# directories under $out, which the report at the end reads. A new multi-host command
# (`railbench load tiers` against $TIER and $BACKEND, `railbench coll --algo all` with rail
# binding) is one more function here and one more entry in STEPS.

step_counters() {
    echo "== mpirun from client1: 2 hosts x 2 ranks, local rank i bound to rail i (scripts/rail-bind.sh)"
    "${CL[@]}" mpirun --net rails -np 4 -x RB_RAIL_VERBOSE=1 "$here/scripts/rail-bind.sh" \
        "$RB" fabric counters --duration 3s --out "$here/$out/counters" --label demo=cluster --quiet
    echo
}

step_rails() {
    # Same-rail against cross-rail MPI traffic: the spine between the rails is rate limited.
    echo "== rails: ping-pong between local rank i of client1 and local rank i (same rail) or i+1 (cross rail) of client2"
    make -s --no-print-directory build/tests/rail_pingpong
    {
        echo "| pair | local ranks | rank 0 bound to | MB/s |"
        echo "|---|---|---|---:|"
        local mode flags
        for mode in same cross; do
            flags=(--bytes 8M)
            [ "$mode" = same ] || flags+=(--cross)
            "${CL[@]}" mpirun --net rails -np 4 "$here/scripts/rail-bind.sh" "$here/build/tests/rail_pingpong" \
                "${flags[@]}" 2>/dev/null |
                jq -r --arg m "$mode" 'select(.local_rank != null) |
                    "| \($m)-rail | \(.local_rank) -> \(.peer_local_rank) | \(.btl_tcp_if_include) | \(.bytes_per_s / 1e6 * 10 | floor / 10) |"'
        done
    } | tee "$out/rails.md"
    echo
}

step_storage_path() {
    # What the tier and the slow link do to one object, by curl from client1: a preview of
    # the direct / cold / warm phases `load tiers` measures at scale.
    echo "== one 16 MiB object from client1: direct from the backend, then through the tier twice"
    head -c 16777216 /dev/urandom >"$ORIGIN/demo-16m"
    chmod 0644 "$ORIGIN/demo-16m"
    {
        echo "| read | URL | X-Cache-Status | seconds | MB/s |"
        echo "|---|---|---|---:|---:|"
        local label url line
        for label in direct cold warm; do
            url=$TIER/demo-16m
            [ "$label" = direct ] && url=$BACKEND/demo-16m
            line=$("${CL[@]}" exec client1 curl -s --max-time 60 -o /dev/null \
                -w '%{time_total} %{speed_download} %header{x-cache-status}' "$url")
            read -r secs speed cache <<<"$line"
            printf '| %s | %s | %s | %s | %.1f |\n' "$label" "$url" "${cache:--}" "$secs" \
                "$(awk -v s="$speed" 'BEGIN { print s / 1e6 }')"
        done
    } | tee "$out/storage-path.md"
    echo
}

step_ansible() {
    echo "== ansible-playbook bench.yml from this machine over ssh: setup, load tiers from both clients, collect"
    ANSIBLE_CONFIG=$here/ansible/ansible.cfg ansible-playbook -i "$("${CL[@]}" path inventory)" \
        "$here/ansible/bench.yml" \
        -e '{"railbench_command": "load tiers", "railbench_ranks_per_host": 2, "railbench_run_id": "ansible-tiers",
             "railbench_args": ["--backend", "{{ railbench_backend_url }}/tiers", "--tier", "{{ railbench_tier_url }}/tiers",
                                "--objects", "8", "--sizes", "1MiB,4MiB", "--warm-epochs", "2", "--fresh",
                                "--label", "demo=ansible"]}' \
        -e "railbench_collect_dir=$here/$out/ansible" </dev/null
    cat "$out/ansible/ansible-tiers/table.md"
    echo
}

STEPS=(step_counters step_rails step_storage_path step_ansible)
for step in "${STEPS[@]}"; do "$step"; done

echo "== report"
mapfile -t results < <(find "$out" -name result.json -printf '%h\n' | sort)
if "$RB" report --help >/dev/null 2>&1; then
    "$RB" report "${results[@]}" -o "$out/report.md"
    cat "$out/report.md"
else
    echo "(this build has no \`railbench report\`; each run's table follows)"
    for d in "${results[@]}"; do
        echo
        echo "### $d"
        cat "$d/table.md"
    done
fi
for f in rails storage-path; do
    echo
    echo "### $out/$f.md"
    cat "$out/$f.md"
done
echo
echo "results: $out"
