#!/usr/bin/python3
"""Prints the Pod form of a Job, DaemonSet or Deployment in a manifest file, for `podman kube play`, which
runs Pods and Deployments but not Jobs: the template's labels and spec under a Pod named NAME.

Usage: tests/k8s/pod_of.py FILE KIND NAME [VOLUME=HOSTPATH...]
Each VOLUME=HOSTPATH replaces the pod's volume VOLUME (an emptyDir, say) with a hostPath directory, so that
what the pod writes there is collected on the host. A persistentVolumeClaim stays: podman maps its claimName
to a podman volume of that name.
"""
import sys

import yaml


def main(argv):
    if len(argv) < 4:
        print('usage: tests/k8s/pod_of.py FILE KIND NAME [VOLUME=HOSTPATH...]', file=sys.stderr)
        return 2
    path, kind, name = argv[1:4]
    with open(path) as f:
        docs = [d for d in yaml.safe_load_all(f) if d and d.get('kind') == kind]
    if len(docs) != 1:
        print(f'error: {path}: {len(docs)} documents of kind {kind}, expected 1', file=sys.stderr)
        return 2
    tmpl = docs[0]['spec']['template']
    spec = tmpl['spec']
    for arg in argv[4:]:
        vol, _, host = arg.partition('=')
        hits = [v for v in spec.get('volumes', []) if v['name'] == vol]
        if not hits:
            print(f'error: {path}: the pod has no volume {vol}', file=sys.stderr)
            return 2
        hits[0].clear()
        hits[0].update({'name': vol, 'hostPath': {'path': host, 'type': 'Directory'}})
    pod = {'apiVersion': 'v1', 'kind': 'Pod',
           'metadata': {'name': name, 'labels': (tmpl.get('metadata') or {}).get('labels', {})}, 'spec': spec}
    yaml.safe_dump(pod, sys.stdout, sort_keys=False)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
