#!/usr/bin/env bash
# needs: -
# railbench fabric map: this host (no GPU, no InfiniBand here) and hwloc XML fixtures of GPU nodes.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
FIX=$ROOT/tests/fixtures/fabric

# This host, through hwloc: it must agree with hwloc's own lstopo.
"$RB" fabric map --json >"$T/host.json"
cores=$(lstopo-no-graphics --only core | wc -l)
gpus=$(lstopo-no-graphics --only osdev 2>/dev/null | grep -Ec 'CoProc|GPU' || true)
assert_jq "$T/host.json" ".cores == $cores" "cores as lstopo counts them ($cores)"
if [ "$gpus" = 0 ]; then
    assert_jq "$T/host.json" '.gpus == [] and .rails == 0 and any(.notes[]; startswith("no GPU found"))' "no GPU here, and it says so"
fi
if ! ls /sys/class/infiniband/* >/dev/null 2>&1; then
    assert_jq "$T/host.json" 'all(.nics[]; .rdma_device == "") and any(.notes[]; startswith("no InfiniBand or RDMA NIC"))' "no InfiniBand here, and it says so"
fi
"$RB" fabric map >"$T/host.txt"
grep -q '^mpirun -np ' "$T/host.txt" || fail "no mpirun line"
ok "host table"

# 8 H100 + 8 ConnectX-7, one pair per PCIe switch; HCA names shuffled against the GPUs.
"$RB" fabric map --xml "$FIX/hwloc/gpu8-nic8.xml" --root "$FIX/sys-gpu8" --json >"$T/g8.json"
assert_jq "$T/g8.json" '(.gpus | length) == 8 and .rails == 8 and .rails_rdma' "8 GPUs, 8 rails"
assert_jq "$T/g8.json" '[.gpus[].nic] == ["mlx5_3","mlx5_2","mlx5_1","mlx5_0","mlx5_7","mlx5_6","mlx5_5","mlx5_4"]' "GPU -> HCA by PCIe switch"
assert_jq "$T/g8.json" 'all(.gpus[]; .pcie_path == "PIX") and [.gpus[].numa] == [0,0,0,0,1,1,1,1]' "all PIX, 4 GPUs per NUMA node"
assert_jq "$T/g8.json" '[.nics[] | select(.rdma_device != "") | .rate_gbit_per_s] | unique == [400]' "NDR 400 from sysfs"
assert_jq "$T/g8.json" '[.nics[] | select(.netdev == "eno1")][0] | .rail == null and .transport == "Ethernet"' "management NIC is no rail"
assert_jq "$T/g8.json" '.mpirun == "mpirun -np $((NODES * 8)) --map-by ppr:8:node:PE=2 --bind-to core -x CUDA_DEVICE_ORDER=PCI_BUS_ID" and .binding_follows_numa' "mpirun line"
assert_jq "$T/g8.json" '.placement[4] | .gpu == 4 and .nic == "mlx5_7" and .cores == "8-9" and .env.CUDA_VISIBLE_DEVICES == "4" and .env.UCX_NET_DEVICES == "mlx5_7:1"' "local rank 4"
"$RB" fabric map --xml "$FIX/hwloc/gpu8-nic8.xml" >"$T/g8.txt"
grep -q '^| 0 | 0000:12:00.0 | NVIDIA H100 80GB HBM3 | cuda0,nvml0 | 0 | 0-7 | mlx5_3 | 0 | PIX |$' "$T/g8.txt" || fail "GPU 0 row"
ok "GPU table row"

# 4 MI210 + 2 ConnectX-6 Dx in RoCE mode: two GPUs per HCA, by switch.
"$RB" fabric map --xml "$FIX/hwloc/gpu4-nic2.xml" --root "$FIX/sys-gpu4" --json --out "$T/run" --quiet >"$T/g4.json"
assert_jq "$T/g4.json" '[.gpus[].nic] == ["mlx5_0","mlx5_0","mlx5_1","mlx5_1"] and .rails == 2' "4 GPUs on 2 rails"
assert_jq "$T/g4.json" 'all(.nics[]; .transport == "RoCE" and .rate_gbit_per_s == 200)' "RoCE at 200 Gbit/s"
assert_jq "$T/g4.json" 'any(.notes[]; . == "4 GPUs share 2 rail NICs")' "sharing noted"
assert_jq "$T/run/result.json" '.command == "fabric map" and .summary.rails == 2' "--out result.json"

# CPU-only host.
"$RB" fabric map --xml "$FIX/hwloc/cpu-only.xml" --json >"$T/cpu.json"
assert_jq "$T/cpu.json" '.gpus == [] and .nics[0].netdev == "eth0" and .mpirun == "mpirun -np $((NODES * 4)) --map-by core --bind-to core"' "CPU-only fixture"

assert_exit 2 "missing XML" "$RB" fabric map --xml "$T/nope.xml"
assert_stderr_line 'railbench: error: --xml: hwloc cannot use'
printf '<topology><object type="Machine"' >"$T/bad.xml"
assert_exit 2 "truncated XML" "$RB" fabric map --xml "$T/bad.xml"
assert_stderr_line 'railbench: error: --xml: hwloc cannot'
