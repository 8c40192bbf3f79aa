#!/usr/bin/python3
"""Validates Kubernetes manifests the way an API server would before it stores them, without one.

Usage: tests/k8s/validate.py FILE...   (multi-document YAML; prints one line a document; exit 0 when every
document is valid, 1 when one is not, 2 on a file that cannot be read or parsed)

Each document of a built-in kind is checked against python3-kubernetes' models of the API (the apiVersion for
its kind, every field known to its model, the field's type, required fields, the enums the models hold);
unknown fields are rejected as `kubectl apply --validate=strict` does. An MPIJob (kubeflow.org/v2beta1) is
checked against the MPI Operator's CRD schema (tests/k8s/mpijob-v2beta1-crd-schema.json) with unknown fields
rejected as the API server's strict field validation does, its metadata and pod templates against the models,
and against what the operator's own validation requires (a Launcher of 1 replica, a Worker).
Beyond the schema, what the API server's validation of these kinds rejects and a manifest can get wrong:
names (DNS-1123), label keys and values, a Deployment's/DaemonSet's/Job's selector against its template's
labels, a Job pod's restartPolicy (Never or OnFailure), container names unique in a pod, volumeMounts naming a
volume of the pod, ports in 1..65535, the values of enumerated fields (imagePullPolicy, restartPolicy,
dnsPolicy, tolerations, protocols, access modes), a Secret's data as base64, a binding's ServiceAccount
namespace, and a key given twice in one map.
"""
import base64
import binascii
import json
import os
import re
import sys

import jsonschema
import kubernetes.client as K
import yaml

KINDS = {
    'v1': ['Pod', 'ConfigMap', 'Secret', 'Service', 'ServiceAccount', 'PersistentVolumeClaim', 'Node', 'Namespace'],
    'apps/v1': ['Deployment', 'DaemonSet', 'StatefulSet'],
    'batch/v1': ['Job'],
    'rbac.authorization.k8s.io/v1': ['ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding'],
}
MPIJOB_API = 'kubeflow.org/v2beta1'
SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'mpijob-v2beta1-crd-schema.json')
DNS1123_SUB = re.compile(r'^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')
DNS1123_LABEL = re.compile(r'^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')
LABEL_NAME = re.compile(r'^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$')
QUANTITY = re.compile(r'^[+-]?(\d+(\.\d*)?|\.\d+)(([KMGTPE]i)|[numkMGTPE]|([eE][+-]?(\d+(\.\d*)?|\.\d+)))?$')
QUANTITY_MAPS = {'limits', 'requests', 'capacity', 'hard', 'allocatable'}
# The values the API server's validation allows where the models hold no enum.
ENUMS = {
    ('V1Container', 'imagePullPolicy'): {'Always', 'Never', 'IfNotPresent'},
    ('V1PodSpec', 'restartPolicy'): {'Always', 'OnFailure', 'Never'},
    ('V1PodSpec', 'dnsPolicy'): {'ClusterFirst', 'ClusterFirstWithHostNet', 'Default', 'None'},
    ('V1Toleration', 'operator'): {'Exists', 'Equal'},
    ('V1Toleration', 'effect'): {'NoSchedule', 'PreferNoSchedule', 'NoExecute'},
    ('V1Taint', 'effect'): {'NoSchedule', 'PreferNoSchedule', 'NoExecute'},
    ('V1ContainerPort', 'protocol'): {'TCP', 'UDP', 'SCTP'},
    ('V1ServicePort', 'protocol'): {'TCP', 'UDP', 'SCTP'},
    ('V1ServiceSpec', 'type'): {'ClusterIP', 'NodePort', 'LoadBalancer', 'ExternalName'},
    ('V1PersistentVolumeClaimSpec', 'accessModes'): {'ReadWriteOnce', 'ReadOnlyMany', 'ReadWriteMany',
                                                      'ReadWriteOncePod'},
    ('V1HostPathVolumeSource', 'type'): {'', 'DirectoryOrCreate', 'Directory', 'FileOrCreate', 'File', 'Socket',
                                         'CharDevice', 'BlockDevice'},
}


class StrictLoader(yaml.SafeLoader):
    """YAML with a key given twice in one map rejected (kubectl's strict decoding does the same)."""

    def construct_mapping(self, node, deep=False):
        seen = set()
        for k, _ in node.value:
            key = self.construct_object(k, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(None, None, f'key "{key}" given twice', k.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep)


def model_of(api, kind):
    """The python3-kubernetes model class of a built-in kind, or None."""
    if kind not in KINDS.get(api, []):
        return None
    return getattr(K, api.split('/')[-1].capitalize() + kind)


def walk(data, typ, path, errs, key=''):
    """Type-checks data against a model type string of python3-kubernetes; unknown fields are errors."""
    if data is None:
        return
    if typ.startswith('list['):
        if not isinstance(data, list):
            errs.append(f'{path}: expected a list, got {type(data).__name__}')
            return
        for i, v in enumerate(data):
            walk(v, typ[5:-1], f'{path}[{i}]', errs)
        return
    if typ.startswith('dict('):
        if not isinstance(data, dict):
            errs.append(f'{path}: expected a map, got {type(data).__name__}')
            return
        vt = typ[5:-1].split(', ', 1)[1]
        for k, v in data.items():
            if key in QUANTITY_MAPS and vt == 'str':
                if isinstance(v, bool) or not isinstance(v, (str, int, float)) or not QUANTITY.match(str(v)):
                    errs.append(f'{path}.{k}: {v!r} is not a quantity')
                continue
            walk(v, vt, f'{path}.{k}', errs, k)
        return
    simple = {'str': str, 'int': int, 'float': (int, float), 'bool': bool, 'datetime': str, 'date': str}
    if typ in simple:
        if isinstance(data, bool) and typ != 'bool' or not isinstance(data, simple[typ]):
            errs.append(f'{path}: expected {typ}, got {type(data).__name__} {data!r}')
        return
    if typ == 'object':
        return
    cls = getattr(K, typ)
    if not isinstance(data, dict):
        errs.append(f'{path}: expected an object ({typ}), got {type(data).__name__}')
        return
    by_json = {j: a for a, j in cls.attribute_map.items()}
    for k, v in data.items():
        if k not in by_json:
            errs.append(f'{path}: unknown field "{k}" ({typ} has {", ".join(sorted(by_json))})')
            continue
        walk(v, cls.openapi_types[by_json[k]], f'{path}.{k}', errs, k)
        allowed = ENUMS.get((typ, by_json[k])) or ENUMS.get((typ, k))
        for one in (v if isinstance(v, list) else [v]):
            if allowed and isinstance(one, str) and one not in allowed:
                errs.append(f'{path}.{k}: {one!r} is not one of {", ".join(sorted(allowed))}')
    try:  # the models' own checks: required fields, enums
        cls(**{by_json[k]: v for k, v in data.items() if k in by_json})
    except (ValueError, TypeError) as e:
        errs.append(f'{path}: {e}')


def strict(schema):
    """The CRD schema with unknown fields rejected (additionalProperties: false where properties are listed)."""
    if isinstance(schema, list):
        return [strict(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: strict(v) for k, v in schema.items()}
    if 'properties' in out and 'additionalProperties' not in out \
            and not out.get('x-kubernetes-preserve-unknown-fields'):
        out['additionalProperties'] = False
    return out


def check_labels(labels, path, errs):
    for k, v in (labels or {}).items():
        if not isinstance(k, str) or not isinstance(v, str):
            errs.append(f'{path}: label {k!r}: {v!r}: keys and values are strings')
            continue
        prefix, _, name = k.rpartition('/')
        if prefix and (len(prefix) > 253 or not DNS1123_SUB.match(prefix)) or len(name) > 63 \
                or not LABEL_NAME.match(name):
            errs.append(f'{path}: label key {k!r} is not valid')
        if v and (len(v) > 63 or not LABEL_NAME.match(v)):
            errs.append(f'{path}: label value {v!r} for {k} is not valid')


def check_pod(spec, path, errs, job=False):
    if not isinstance(spec, dict):
        return
    vols = {v.get('name') for v in spec.get('volumes') or [] if isinstance(v, dict)}
    names = []
    for field in ('initContainers', 'containers'):
        for i, c in enumerate(spec.get(field) or []):
            if not isinstance(c, dict):
                continue
            p = f'{path}.{field}[{i}]'
            names.append(c.get('name'))
            if isinstance(c.get('name'), str) and not DNS1123_LABEL.match(c['name']):
                errs.append(f'{p}.name: {c["name"]!r} is not a DNS-1123 label')
            if not c.get('image'):
                errs.append(f'{p}: no image')
            for m in c.get('volumeMounts') or []:
                if isinstance(m, dict) and m.get('name') not in vols:
                    errs.append(f'{p}.volumeMounts: {m.get("name")!r} names no volume of the pod')
            for q in c.get('ports') or []:
                n = q.get('containerPort') if isinstance(q, dict) else None
                if isinstance(n, int) and not 1 <= n <= 65535:
                    errs.append(f'{p}.ports: containerPort {n} is not in 1..65535')
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        errs.append(f'{path}: container names not unique: {", ".join(sorted(map(str, dup)))}')
    if not spec.get('containers'):
        errs.append(f'{path}.containers: a pod needs one container')
    if job and spec.get('restartPolicy', 'Always') not in ('Never', 'OnFailure'):
        errs.append(f'{path}.restartPolicy: a Job\'s pods restart Never or OnFailure, not '
                    f'{spec.get("restartPolicy", "Always (the default)")}')


def check_selector(obj, path, errs):
    spec = obj.get('spec') or {}
    sel = (spec.get('selector') or {}).get('matchLabels') or {}
    labels = ((spec.get('template') or {}).get('metadata') or {}).get('labels') or {}
    if obj['kind'] != 'Job' and not sel:
        errs.append(f'{path}.spec.selector: required')
    for k, v in sel.items():
        if labels.get(k) != v:
            errs.append(f'{path}.spec.selector: {k}={v} does not match the template\'s labels')


def check_mpijob(obj, schema, errs):
    for e in sorted(jsonschema.Draft7Validator(schema).iter_errors(obj), key=lambda e: list(e.path)):
        errs.append(f'MPIJob.{".".join(map(str, e.path))}: {e.message}')
    walk(obj.get('metadata'), 'V1ObjectMeta', 'MPIJob.metadata', errs)
    reps = (obj.get('spec') or {}).get('mpiReplicaSpecs') or {}
    if not isinstance(reps, dict):
        return
    for role, r in reps.items():
        p = f'MPIJob.spec.mpiReplicaSpecs.{role}'
        if role not in ('Launcher', 'Worker'):
            errs.append(f'{p}: the operator knows Launcher and Worker only')
        if not isinstance(r, dict):
            continue
        walk(r.get('template'), 'V1PodTemplateSpec', f'{p}.template', errs)
        check_pod((r.get('template') or {}).get('spec'), f'{p}.template.spec', errs)
    if 'Launcher' not in reps:
        errs.append('MPIJob.spec.mpiReplicaSpecs: no Launcher')
    elif isinstance(reps['Launcher'], dict) and reps['Launcher'].get('replicas', 1) != 1:
        errs.append('MPIJob.spec.mpiReplicaSpecs.Launcher.replicas: must be 1')
    if 'Worker' not in reps and not (obj.get('spec') or {}).get('runLauncherAsWorker'):
        errs.append('MPIJob.spec.mpiReplicaSpecs: no Worker')


def check(obj, schema):
    errs = []
    if not isinstance(obj, dict):
        return '?', ['the document is not a map']
    api, kind = obj.get('apiVersion'), obj.get('kind')
    name = ((obj.get('metadata') or {}) if isinstance(obj.get('metadata'), dict) else {}).get('name')
    what = f'{kind}/{name}'
    if not isinstance(name, str) or len(name) > 253 or not DNS1123_SUB.match(name):
        errs.append(f'{kind}.metadata.name: {name!r} is not a DNS-1123 name')
    meta = obj.get('metadata') if isinstance(obj.get('metadata'), dict) else {}
    check_labels(meta.get('labels'), f'{kind}.metadata.labels', errs)
    if kind == 'Secret' and api == 'v1':
        for k, v in (obj.get('data') or {}).items():
            try:
                base64.b64decode(v if isinstance(v, str) else '', validate=True)
            except (binascii.Error, ValueError):
                errs.append(f'Secret.data.{k}: not base64 (plain text goes in stringData)')
    for i, sub in enumerate(obj.get('subjects') or [] if kind in ('ClusterRoleBinding', 'RoleBinding') else []):
        if isinstance(sub, dict) and sub.get('kind') == 'ServiceAccount' and not sub.get('namespace'):
            errs.append(f'{kind}.subjects[{i}].namespace: required for a ServiceAccount')
    if kind == 'MPIJob':
        if api != MPIJOB_API:
            errs.append(f'apiVersion {api!r}: MPIJob is {MPIJOB_API}')
        check_mpijob(obj, schema, errs)
        return what, errs
    cls = model_of(api, kind)
    if cls is None:
        known = [f'{a} {k}' for a, ks in KINDS.items() for k in ks if k == kind]
        errs.append(f'apiVersion {api!r}, kind {kind!r}: not a kind this checker knows'
                    + (f' (that kind is {known[0]})' if known else ''))
        return what, errs
    walk(obj, cls.__name__, kind, errs)
    spec = obj.get('spec') if isinstance(obj.get('spec'), dict) else {}
    tmpl = spec.get('template') if isinstance(spec.get('template'), dict) else {}
    if kind in ('Deployment', 'DaemonSet', 'StatefulSet', 'Job'):
        check_selector(obj, kind, errs)
        check_labels((tmpl.get('metadata') or {}).get('labels'), f'{kind}.spec.template.metadata.labels', errs)
        check_pod(tmpl.get('spec'), f'{kind}.spec.template.spec', errs, job=kind == 'Job')
    elif kind == 'Pod':
        check_pod(spec, 'Pod.spec', errs)
    return what, errs


def main(argv):
    if len(argv) < 2:
        print('usage: tests/k8s/validate.py FILE...', file=sys.stderr)
        return 2
    with open(SCHEMA) as f:
        schema = strict(json.load(f)['openAPIV3Schema'])
    bad = 0
    for path in argv[1:]:
        try:
            with open(path) as f:
                docs = [d for d in yaml.load_all(f, Loader=StrictLoader) if d is not None]
        except (OSError, yaml.YAMLError) as e:
            print(f'error: {path}: ' + ' '.join(str(e).split()), file=sys.stderr)
            return 2
        for d in docs:
            what, errs = check(d, schema)
            if errs:
                bad += 1
                for e in errs:
                    print(f'{path}: {what}: invalid: {e}')
            else:
                print(f'{path}: {what}: valid')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
