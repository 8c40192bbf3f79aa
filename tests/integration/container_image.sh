#!/usr/bin/env bash
# needs: deb mpi netns root
# The OCI image and the Kubernetes manifests (docs/kubernetes.md), run where podman can run containers:
#  1. make image's build (packaging/image/build.sh; the Debian root and the package of HEAD are reused from
#     build/image while they stay the same): the image's railbench reports HEAD's version, holds the dashboards,
#     playbooks and man page under /usr/share as the .deb does, has the non-root user, and no compiler or apt;
#  2. the test servers' Deployment (deploy/kubernetes/test-servers.yaml) under `podman kube play` on a podman
#     network of this test's own; `load put` and `load get --verify` from a container of the image against it,
#     and the host's build/railbench against the same server: the same figures (keys) in both result.json;
#  3. the MPIJobs' shape: two worker containers running the Worker command of deploy/kubernetes/mpijob-coll.yaml
#     (sshd), a launcher container running mpirun with the operator's hostfile variable: a 2-rank all-reduce,
#     its rows and keys as on the host's 2-rank run, a 2-rank `load get`, and the launcher command of
#     mpijob-load-train.yaml against the test servers with a data set of test size;
#  4. the fabric check Job's `check` script, as written in fabric-check.yaml, over two worker containers: the
#     Node file it writes carries the label and taint key the manifests select and tolerate, and validates;
#  5. the Pod form of job-load.yaml under `podman kube play` (PVC as a podman volume, /results collected):
#     put, get --verify and checkpoint write/read, their result.json counts;
#  6. every manifest validates against the API's models and the MPIJob CRD schema; planted mistakes are
#     rejected, each with a line naming the field.
# Skips with one line where podman cannot run a container.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
K8S=$ROOT/deploy/kubernetes
PY=/usr/bin/python3   # Debian's python: python3-kubernetes and python3-yaml live there

# 6 first: it needs no container.
"$PY" "$ROOT/tests/k8s/validate.py" "$K8S"/*.yaml >"$T/valid.out" || { cat "$T/valid.out" >&2; fail "a manifest is invalid"; }
n=$(grep -c ': valid$' "$T/valid.out")
[ "$n" -ge 15 ] || { cat "$T/valid.out" >&2; fail "$n documents validated, expected 15 or more"; }
for k in MPIJob/railbench-coll MPIJob/railbench-load-train Job/railbench-load Job/railbench-load-s3 \
    DaemonSet/railbench-fabric-worker Job/railbench-fabric-check Deployment/railbench-servers; do
    grep -q ": $k: valid$" "$T/valid.out" || fail "no valid $k among the manifests"
done
ok "$n manifest documents valid (models of the API; MPIJob against the CRD schema, unknown fields rejected)"

# plant FILE KIND PYTHON-STATEMENT PATTERN: the manifest with the statement applied to the document of KIND
# (as d) is rejected, with an invalid: line matching PATTERN.
plant() {
    local file=$1 kind=$2 stmt=$3 pat=$4 out=$T/planted.yaml rc=0
    "$PY" - "$K8S/$file" "$kind" "$stmt" "$out" <<'PY'
import sys, yaml
src, kind, stmt, out = sys.argv[1:]
docs = [d for d in yaml.safe_load_all(open(src)) if d]
for d in docs:
    if d['kind'] == kind:
        exec(stmt)
yaml.safe_dump_all(docs, open(out, 'w'))
PY
    "$PY" "$ROOT/tests/k8s/validate.py" "$out" >"$T/planted.out" 2>&1 || rc=$?
    [ "$rc" = 1 ] || { cat "$T/planted.out" >&2; fail "planted in $file ($stmt): exit $rc, expected 1"; }
    grep -E ': invalid: ' "$T/planted.out" | grep -Eq -- "$pat" ||
        { cat "$T/planted.out" >&2; fail "planted in $file ($stmt): no invalid: line matching /$pat/"; }
    planted=$((planted + 1))
}
planted=0
W="d['spec']['mpiReplicaSpecs']['Worker']"
L="d['spec']['mpiReplicaSpecs']['Launcher']"
plant mpijob-coll.yaml MPIJob "d['spec']['slotsPerWorkers'] = 1" 'slotsPerWorkers'
plant mpijob-coll.yaml MPIJob "${W}['replicas'] = 'two'" "Worker.replicas: 'two' is not of type 'integer'"
plant mpijob-coll.yaml MPIJob "${W}['template']['spec']['containers'][0]['imagePullPolicyy'] = 'Always'" 'imagePullPolicyy'
plant mpijob-coll.yaml MPIJob "${L}['replicas'] = 2" 'Launcher.replicas: must be 1'
plant mpijob-coll.yaml MPIJob "d['apiVersion'] = 'kubeflow.org/v1'" "MPIJob is kubeflow.org/v2beta1"
plant mpijob-coll.yaml MPIJob "d['spec']['mpiImplementation'] = 'OpenMP'" "'OpenMP' is not one of"
plant mpijob-coll.yaml MPIJob "del ${W}['template']['spec']['containers'][0]['name']" 'name.*must not be .None'
plant mpijob-load-train.yaml MPIJob "d['spec']['mpiReplicaSpecs']['Workers'] = d['spec']['mpiReplicaSpecs'].pop('Worker')" 'Launcher and Worker only'
plant job-load.yaml Job "d['spec']['template']['spec']['restartPolicy'] = 'Always'" "restartPolicy: a Job's pods"
plant job-load.yaml Job "d['spec']['template']['spec']['containers'][0]['volumeMounts'][0]['name'] = 'dat'" "'dat' names no volume"
plant job-load.yaml Job "d['spec']['template']['spec']['containers'][0]['args'] = 'railbench load get'" 'args: expected a list'
plant job-load.yaml Job "d['spec']['backoffLimit'] = '0'" 'backoffLimit: expected int'
plant job-load-s3.yaml Job "d['spec']['template']['spec']['containers'][0]['env'][2]['valueFrom']['secretKeyRef']['keyy'] = 'x'" 'unknown field "keyy"'
plant fabric-check.yaml DaemonSet "d['spec']['selector']['matchLabels']['app.kubernetes.io/component'] = 'fabric'" 'does not match the template'
plant fabric-check.yaml DaemonSet "d['spec']['template']['spec']['hostNetwrok'] = True" 'unknown field "hostNetwrok"'
plant fabric-check.yaml Job "d['apiVersion'] = 'batch/v2'" "that kind is batch/v1 Job"
plant test-servers.yaml Deployment "d['spec']['template']['spec']['containers'][0]['ports'][0]['containerPort'] = 80800" 'not in 1..65535'
plant test-servers.yaml Deployment "d['spec']['template']['spec']['containers'][0]['resources']['limits']['cpu'] = '2 cores'" 'is not a quantity'
plant pvc.yaml PersistentVolumeClaim "d['metadata']['name'] = 'Railbench_Data'" 'not a DNS-1123 name'
plant pvc.yaml PersistentVolumeClaim "d['metadata']['labels']['app.kubernetes.io/name'] = 'rail bench'" 'label value'
plant job-load.yaml Job "d['spec']['template']['spec']['containers'][0]['imagePullPolicy'] = 'Allways'" "'Allways' is not one of"
plant fabric-check.yaml DaemonSet "d['spec']['template']['spec']['tolerations'][0]['effect'] = 'NoSchedul'" "'NoSchedul' is not one of"
plant fabric-check.yaml ClusterRoleBinding "del d['subjects'][0]['namespace']" 'namespace: required for a ServiceAccount'
plant job-load-s3.yaml Secret "d['data'] = {'access-key': 'plain text!'}" 'not base64'
ok "$planted planted mistakes rejected, each with a line naming the field"
# A key given twice (the second would silently win in a lax parser): one error line, exit 2.
sed 's/^  backoffLimit: 0$/  backoffLimit: 0\n  backoffLimit: 3/' "$K8S/job-load.yaml" >"$T/twice.yaml"
assert_exit 2 "a manifest with backoffLimit given twice" "$PY" "$ROOT/tests/k8s/validate.py" "$T/twice.yaml"
assert_stderr_line '^error: .*twice.yaml: key "backoffLimit" given twice'

# Can podman run a container here? A root of /bin/true and its libraries, run with the runtime make image uses.
command -v podman >/dev/null || { echo "skip: podman cannot run containers here: podman is not installed"; exit 0; }
[ "$(id -u)" = 0 ] || { echo "skip: podman cannot run containers here: make image's podman is rootful"; exit 0; }
# The sandbox lacks CAP_SYS_RESOURCE: no limit above the hard limits this shell has.
nofile=$(ulimit -Hn); nproc=$(ulimit -Hu)
[ "$nofile" = unlimited ] && nofile=1048576
[ "$nproc" = unlimited ] && nproc=1048576
[ "$nofile" -le 20000 ] || nofile=20000
[ "$nproc" -le 32768 ] || nproc=32768
printf '[containers]\ndefault_ulimits = ["nofile=%s:%s", "nproc=%s:%s"]\n[engine]\nruntime = "runc"\n' \
    "$nofile" "$nofile" "$nproc" "$nproc" >"$T/containers.conf"
export CONTAINERS_CONF=$T/containers.conf
mkdir -p "$T/probe"
for f in /bin/true $(ldd /bin/true | grep -o '/[^ ]*'); do cp --parents -L "$f" "$T/probe/"; done
if ! podman run --rm --network none --rootfs "$T/probe" /bin/true >"$T/probe.out" 2>&1; then
    echo "skip: podman cannot run containers here: $(grep . "$T/probe.out" | tail -n 1)"
    exit 0
fi

# 1. The image.
nice -n 10 "$ROOT/packaging/image/build.sh" >"$T/build.out" 2>&1 || { cat "$T/build.out" >&2; fail "make image failed"; }
IMG=$(cat "$ROOT/build/image/image.tag")
want="railbench $(git -C "$ROOT" describe --tags --match 'v[0-9]*' --always)"
got=$(podman run --rm "$IMG" railbench version | head -n 1)
assert_eq "railbench version in $IMG (HEAD's build)" "$want" "$got"
if [ -z "$(git -C "$ROOT" status --porcelain --untracked-files=no)" ] && [ -x "$RB" ]; then
    assert_eq "railbench version: image = host build" "$("$RB" version | head -n 1)" "$got"
fi
podman run --rm "$IMG" sh -c 'for f in /usr/share/railbench/grafana/dashboards/railbench-load.json \
    /usr/share/railbench/ansible/bench.yml /usr/share/man/man1/railbench.1.gz /usr/share/doc/railbench/copyright \
    /usr/bin/mpirun /usr/sbin/sshd; do [ -e "$f" ] || echo "missing $f"; done
    for t in apt-get gcc cc make; do command -v $t >/dev/null && echo "has $t"; done
    echo "user $(id -u railbench)"; echo "PATH=$PATH"' >"$T/img.out"
grep -E '^(missing|has) ' "$T/img.out" && fail "the image's contents: $(grep -E '^(missing|has) ' "$T/img.out" | paste -sd ';')"
grep -qx 'user 10001' "$T/img.out" || fail "no user railbench (10001) in the image"
grep -q '^PATH=.*/usr/bin' "$T/img.out" || fail "PATH in the image: $(grep PATH= "$T/img.out")"
size=$(podman image inspect --format '{{.Size}}' "$IMG")
[ "$size" -lt 400000000 ] || fail "the image is $size bytes: more than 400 MB"
ok "$IMG: dashboards, playbooks, man page, mpirun, sshd, user railbench (10001); no apt or compiler; $((size / 1000000)) MB"
podman run --rm --user railbench "$IMG" sh -c 'id -un; railbench fabric overhead --quiet --out /tmp/o >/dev/null && test -s /tmp/o/result.json && echo wrote' >"$T/user.out"
assert_eq "railbench run as user railbench" "railbench wrote" "$(paste -sd' ' "$T/user.out")"

# A network of this test's own; everything it starts is removed at exit.
tag=rbk8s$$
NET=$tag-net
podman network create "$NET" >/dev/null
AT_EXIT+=("podman network rm -f $NET >/dev/null 2>&1")

# 2. The test servers' Deployment under podman kube play.
sed -e "s/name: railbench-servers$/name: $tag-servers/; s/name: railbench-servers}/name: $tag-servers}/" "$K8S/test-servers.yaml" >"$T/servers.yaml"
# kube down leaves the volume podman made of the ConfigMap: removed by name.
AT_EXIT+=("podman kube down $T/servers.yaml >/dev/null 2>&1; podman volume rm -f $tag-servers >/dev/null 2>&1")
podman kube play --network "$NET" "$T/servers.yaml" >"$T/play.out" 2>&1 || { cat "$T/play.out" >&2; fail "podman kube play test-servers.yaml"; }
ctr=$(podman ps --filter "pod=$tag-servers-pod-0" --filter name=nginx --format '{{.Names}}' | head -n 1)
[ -n "$ctr" ] || { podman ps -a >&2; fail "no nginx container of the Deployment's pod"; }
SIP=$(podman inspect --format "{{(index .NetworkSettings.Networks \"$NET\").IPAddress}}" "$tag-servers-pod-0-infra" 2>/dev/null ||
    podman pod inspect --format '{{.InfraContainerID}}' "$tag-servers-pod-0" | xargs podman inspect --format "{{(index .NetworkSettings.Networks \"$NET\").IPAddress}}")
[ -n "$SIP" ] || fail "no address of the servers' pod on $NET"
for _ in $(seq 100); do (exec 3<>"/dev/tcp/$SIP/8080") 2>/dev/null && break; sleep 0.1; done
URL=http://$SIP:8080/data/
mkdir -p "$T/res" && chmod 777 "$T/res"
run() { podman run --rm --network "$NET" -v "$T/res:/results" "$IMG" "$@"; }
run railbench load put "$URL" --objects 20 --size 256KiB --keep --quiet --out /results/put >/dev/null
run railbench load get "$URL" --objects 20 --size 256KiB --verify --count 100 --quiet --out /results/get >/dev/null
assert_jq "$T/res/put/result.json" '.summary.ops[0].requests == 20 and .summary.ops[0].errors.total == 0 and .summary.ops[0].bytes == 20 * 262144' \
    "container load put: 20 PUTs of 256 KiB to the Deployment's nginx"
assert_jq "$T/res/get/result.json" '.summary.ops[0].requests == 100 and .summary.ops[0].errors.total == 0 and .summary.ops[0].bytes == 100 * 262144' \
    "container load get --verify: 100 GETs, 26214400 bytes, no error"
"$RB" load get "$URL" --objects 20 --size 256KiB --verify --count 100 --quiet --out "$T/host-get" >"$T/host-get.out" 2>&1 ||
    { cat "$T/host-get.out" >&2; fail "the host's load get against the Deployment's nginx"; }
assert_jq "$T/host-get/result.json" '.summary.ops[0].requests == 100 and .summary.ops[0].errors.total == 0' "host load get: 100 GETs verified"
# shape RESULT: a digest of every key path of a result.json (array indices as 0): the figures it holds.
shape() {
    jq -c '[paths(scalars or . == null) | map(if type == "number" then 0 else . end) | join(".")] | unique' "$1" |
        md5sum | cut -c1-32
}
assert_eq "load get result.json keys: container = host" "$(shape "$T/host-get/result.json")" "$(shape "$T/res/get/result.json")"

# yaml_cmd FILE KIND PYTHON-EXPR: prints the list PYTHON-EXPR picks from the document of KIND (as d), NUL-separated.
yaml_cmd() {
    "$PY" - "$@" <<'PY'
import sys, yaml
src, kind, expr = sys.argv[1:]
d = [d for d in yaml.safe_load_all(open(src)) if d and d['kind'] == kind][0]
sys.stdout.write(''.join(str(a) + '\0' for a in eval(expr)))
PY
}
# workers NAME N: N containers running the Worker command of mpijob-coll.yaml (sshd on 2222) with the test's
# key as the operator's Secret; sets WIPS (their addresses).
mkdir -p "$T/ssh" "$T/mpi"
ssh-keygen -q -t ed25519 -N '' -C railbench-test -f "$T/ssh/id_ed25519"
cp "$T/ssh/id_ed25519.pub" "$T/ssh/authorized_keys"
mapfile -d '' WCMD < <(yaml_cmd "$K8S/mpijob-coll.yaml" MPIJob \
    "(lambda c: c['command'] + c.get('args', []))(d['spec']['mpiReplicaSpecs']['Worker']['template']['spec']['containers'][0])")
workers() {
    local i ip
    WIPS=()
    for i in $(seq "$2"); do
        AT_EXIT+=("podman rm -f -t 0 $1-$i >/dev/null 2>&1")
        podman run -d --name "$1-$i" --hostname "$1-$i" --network "$NET" -v "$T/ssh:/root/.ssh:ro" \
            -v "$T/res:/results" "$IMG" "${WCMD[@]}" >/dev/null
        ip=$(podman inspect --format "{{(index .NetworkSettings.Networks \"$NET\").IPAddress}}" "$1-$i")
        for _ in $(seq 100); do (exec 3<>"/dev/tcp/$ip/2222") 2>/dev/null && break; sleep 0.1; done
        WIPS+=("$ip")
    done
}

# 3. The MPIJob's launcher and workers: two ranks in two containers.
workers "$tag-w" 2
printf '%s slots=1\n' "${WIPS[@]}" >"$T/mpi/hostfile"
mapfile -d '' LCMD < <(yaml_cmd "$K8S/mpijob-coll.yaml" MPIJob \
    "(lambda c: c['command'] + c['args'])(d['spec']['mpiReplicaSpecs']['Launcher']['template']['spec']['containers'][0])")
# The manifest's all-reduce up to 1 MiB instead of 128 MiB: a test's time.
for i in "${!LCMD[@]}"; do [ "${LCMD[i]}" != 128M ] || LCMD[i]=1M; done
launch() {
    podman run --rm --name "$tag-launcher" --network "$NET" -v "$T/ssh:/root/.ssh:ro" -v "$T/mpi:/etc/mpi:ro" \
        -e OMPI_MCA_orte_default_hostfile=/etc/mpi/hostfile "$IMG" "$@"
}
launch "${LCMD[@]}" >"$T/coll.out" 2>&1 || { cat "$T/coll.out" >&2; fail "the MPIJob's launcher command: $(printf '%s ' "${LCMD[@]}")"; }
R=$T/res/coll/result.json
[ -f "$R" ] || { cat "$T/coll.out" >&2; fail "rank 0 (the first worker) wrote no $R"; }
assert_jq "$R" '.summary.ranks == 2 and .summary.ranks_per_node == 1 and (.hosts | length) == 2' \
    "the all-reduce ran on 2 ranks, one in each worker container"
"${MPIRUN[@]}" -np 2 "$RB" coll allreduce --algo mpi,ring -b 8 -e 1M -f 4 --out "$T/host-coll" >"$T/host-coll.out" 2>&1 ||
    { cat "$T/host-coll.out" >&2; fail "the host's 2-rank all-reduce"; }
rowkey='[.summary.collective_rows[] | [.coll, .algo, .size_bytes, .count, .ranks]] | tostring'
[ "$(jq -r "$rowkey" "$T/host-coll/result.json")" = "$(jq -r "$rowkey" "$R")" ] ||
    fail "all-reduce rows differ: host $(jq -r "$rowkey" "$T/host-coll/result.json"), containers $(jq -r "$rowkey" "$R")"
ok "all-reduce rows (collective, algorithm, size, count, ranks): 2 containers = host, $(jq '.summary.collective_rows | length' "$R") rows"
assert_jq "$R" '.summary.wrong_total == 0' "every element of every all-reduce right across the containers"
assert_eq "coll result.json keys: 2 containers = host" "$(shape "$T/host-coll/result.json")" "$(shape "$R")"
launch mpirun -np 2 --bind-to none --mca btl self,tcp railbench load get "$URL" --objects 20 --size 256KiB \
    --verify --count 100 --quiet --out /results/mpi-get >"$T/mget.out" 2>&1 || { cat "$T/mget.out" >&2; fail "2-rank load get"; }
assert_jq "$T/res/mpi-get/result.json" '.summary.ranks == 2 and .summary.ops[0].errors.total == 0 and
    .summary.ops[0].requests >= 100 and .summary.ops[0].bytes == .summary.ops[0].requests * 262144' \
    "2-rank load get in 2 containers: $(jq .summary.ops[0].requests "$T/res/mpi-get/result.json") GETs verified, no error"

# The load train MPIJob's launcher command with the Deployment's nginx in place of its S3 bucket (no --endpoint;
# the Secret's variables set, unused over HTTP) and a data set of test size: 16 objects of 4 samples of 64 KiB,
# batches of 4.
mapfile -d '' TCMD < <(yaml_cmd "$K8S/mpijob-load-train.yaml" MPIJob \
    "(lambda c: c['command'] + c['args'])(d['spec']['mpiReplicaSpecs']['Launcher']['template']['spec']['containers'][0])")
TT=() drop=0
for a in "${TCMD[@]}"; do
    if [ "$drop" = 1 ]; then drop=0; continue; fi
    case $a in
    s3://*) TT+=("$URL") ;;
    --endpoint | --objects) drop=1 ;;
    *) TT+=("$a") ;;
    esac
done
TT+=(--objects 16 --samples-per-object 4 --sample-size 64KiB -b 4 --steps 2 --prefix train-)
launch_env=(-e AWS_ACCESS_KEY_ID=unused -e AWS_SECRET_ACCESS_KEY=unused)
podman run --rm --name "$tag-launcher" --network "$NET" -v "$T/ssh:/root/.ssh:ro" -v "$T/mpi:/etc/mpi:ro" \
    -e OMPI_MCA_orte_default_hostfile=/etc/mpi/hostfile "${launch_env[@]}" "$IMG" "${TT[@]}" >"$T/train.out" 2>&1 ||
    { cat "$T/train.out" >&2; fail "the load train MPIJob's launcher command: ${TT[*]}"; }
assert_jq "$T/res/train/result.json" '.summary.ranks == 2 and .summary.errors == 0 and (.summary.train_epochs | length) == 2 and
    .summary.populate.requests == 16 and .summary.au_mean_pct > 0' \
    "load train MPIJob command in 2 containers: 16 objects populated, 2 epochs, AU $(jq '.summary.au_mean_pct | floor' "$T/res/train/result.json" 2>/dev/null) %"

# 4. The fabric check Job's check script, as fabric-check.yaml has it, over two workers (two hosts of one rail):
# the headless Service's name resolves to the workers (here: /etc/hosts entries).
workers "$tag-f" 2
mkdir -p "$T/shared"
mapfile -d '' CHECK < <(yaml_cmd "$K8S/fabric-check.yaml" Job \
    "(lambda c: c['command'] + c['args'])(d['spec']['template']['spec']['initContainers'][0])")
hosts=()
for ip in "${WIPS[@]}"; do hosts+=(--add-host "railbench-fabric-workers:$ip"); done
podman run --rm --name "$tag-check" --network "$NET" "${hosts[@]}" -v "$T/ssh:/root/.ssh:ro" -v "$T/shared:/shared" \
    -e HOSTS=2 -e RAILS=1 -e IFACES=eth0 -e OOB_IF=eth0 "$IMG" "${CHECK[@]}" >"$T/check.out" 2>&1 ||
    { cat "$T/check.out" >&2; fail "fabric-check.yaml's check script"; }
N=$T/shared/nodes.yaml
[ -s "$N" ] || { cat "$T/check.out" >&2; fail "no Node file copied back to /shared"; }
"$PY" "$ROOT/tests/k8s/validate.py" "$N" >"$T/nodes.valid" || { cat "$T/nodes.valid" >&2; fail "the Node file the check wrote is invalid"; }
assert_eq "Nodes in the Node file" "Node/$tag-f-1 Node/$tag-f-2" "$(grep -o 'Node/[^:]*' "$T/nodes.valid" | sort | paste -sd' ')"
assert_jq "$T/shared/result.json" '.summary.actions.k8s_nodes | type == "string"' "the check's result.json (copied back) records the Node file"
# What the check writes is what the manifests select and tolerate.
"$PY" - "$N" "$K8S" <<'PY' >"$T/labels.out" || { cat "$T/labels.out" >&2; fail "labels: the manifests and the check disagree"; }
import sys, yaml, glob
nodes = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
keys = {k for n in nodes for k in n['metadata']['labels']}
vals = {v for n in nodes for v in n['metadata']['labels'].values()}
taints = {t['key'] for n in nodes for t in (n.get('spec') or {}).get('taints', [])}
assert keys == {'railbench.io/fabric-check'}, keys
assert vals <= {'PASS', 'EVICT'}, vals
assert taints <= keys, taints
docs = [d for f in sorted(glob.glob(sys.argv[2] + '/*.yaml')) for d in yaml.safe_load_all(open(f)) if d]
ds = [d for d in docs if d['kind'] == 'DaemonSet'][0]
tol = {t['key'] for t in ds['spec']['template']['spec']['tolerations']}
assert tol == keys, ('DaemonSet tolerations', tol)
sel = [(k, v) for d in docs if d['kind'] == 'MPIJob' for k, v in
       d['spec']['mpiReplicaSpecs']['Worker']['template']['spec'].get('nodeSelector', {}).items()]
assert sel and all(k in keys and v == 'PASS' for k, v in sel), ('MPIJob nodeSelector', sel)
print(f'labels {sorted(vals)}, the DaemonSet tolerates {sorted(tol)}, {len(sel)} MPIJobs select PASS')
PY
ok "fabric check Job script over 2 worker containers: $(cat "$T/labels.out")"

# 5. The Job in Pod form under podman kube play: the PVC is a podman volume, /results a directory collected here.
mkdir -p "$T/pod-res" && chmod 777 "$T/pod-res"
"$PY" "$ROOT/tests/k8s/pod_of.py" "$K8S/job-load.yaml" Job "$tag-load" "results=$T/pod-res" |
    sed -e "s/claimName: railbench-data$/claimName: $tag-data/" >"$T/job-pod.yaml"
AT_EXIT+=("podman kube down $T/job-pod.yaml >/dev/null 2>&1; podman volume rm -f $tag-data >/dev/null 2>&1")
podman kube play --network "$NET" "$T/job-pod.yaml" >"$T/jobplay.out" 2>&1 || { cat "$T/jobplay.out" >&2; fail "podman kube play of the Job's Pod form"; }
podman wait "$tag-load-checkpoint" >"$T/job.rc" || fail "podman wait $tag-load-checkpoint"
[ "$(cat "$T/job.rc")" = 0 ] || { podman logs "$tag-load-checkpoint" >&2; fail "the Job's checkpoint container: exit $(cat "$T/job.rc")"; }
assert_jq "$T/pod-res/put/result.json" '.summary.ops[0].requests == 100 and .summary.ops[0].bytes == 104857600 and .summary.ops[0].errors.total == 0' \
    "Job put: 100 files of 1 MiB on the PVC"
assert_jq "$T/pod-res/get/result.json" '.summary.ops[0].requests == 400 and .summary.ops[0].bytes == 400 * 1048576 and .summary.ops[0].errors.total == 0' \
    "Job get --verify: 400 reads of 1 MiB, no error"
assert_jq "$T/pod-res/checkpoint/result.json" '[.summary.writes[], .summary.reads[]] | length == 2 and all(.errors == 0 and .bytes > 0)' \
    "Job checkpoint: 1 write and 1 read verified, $(jq '.summary.writes[0].bytes' "$T/pod-res/checkpoint/result.json") bytes each"
files=$(podman run --rm -v "$tag-data:/data" "$IMG" sh -c 'ls /data | grep -c "^railbench-load-"')
assert_eq "files left on the PVC by put --keep" 100 "$files"
