#!/usr/bin/env python3
"""Test peer for railbench's loader tests: known delays, one stall, chosen failures, and an AIStore stand-in.

Python standard library only; binds 127.0.0.1. Behaviour by path:

  /<anything>            200 with --size bytes after --delay-ms (keep-alive, HTTP/1.1)
  /status/<code>/...     that status with a short body
  /reset/...             closes the connection without answering        (client: reset)
  /short/...             announces 1000 bytes, sends 500, closes          (client: short_read)
  /slow/...              answers after 3 s                                (client: timeout)
  /redirect/...          307 to itself, forever                           (client: too_many_redirects)
  /redirect-https/...    307 to itself over https:// (another scheme)     (client: other)
  /v1/objects/B/O        AIStore proxy: 307 to /target/v1/objects/B/O (query kept)
  /target/v1/objects/B/O AIStore target: PUT stores, GET returns the stored bytes (404 if none); a GET with
                         "Range: bytes=A-B" (or the suffix "bytes=-N") answers 206 with those bytes (counted
                         in ranged_gets)
  /v1/buckets/B          AIStore list action (GET with a JSON body): pages of --ais-page entries
                         with "continuation_token" and "uuid", as in AIStore's docs/http_api.md;
                         DELETE with {"action":"evict-listrange","value":{"template"|"objnames"}} drops
                         those objects and answers a job id; with {"action":"evict-remote-bck"} (and
                         ?keep_bck_md=true) drops every object of the bucket
  /v1/cluster?what=status  AIStore job status (GET with {"id":..}): end_time stays 0 for
                         --ais-evict-ms after the job started, as a job that takes time
  /peer/stats            JSON: backend_fetches, evictions (each request's action and value), status_polls,
                         held (the stored names), ranged_gets, target_requests (per target id), misdirected

With --ais-targets PORT,PORT,... the stand-in is a cluster: one proxy (--port) and a target per port
(daemon id "t<PORT>"). The proxy serves the cluster map (GET /v1/daemon?what=smap, AIStore's Smap JSON:
tmap of daemon_id, public_net.direct_url, flags) and redirects each object request to the target that
owns the object by AIStore's HRW (core/meta/hrw.go: XXH64 of the uname "<provider>/@#/<bucket>/<object>"
seeded with MLCG32, xored with each target's XXH64 of its id, through xoshiro256's hash; the highest
wins). A target serves /v1/objects/B/O (PUT, GET, HEAD, DELETE) for the objects it owns, counted per
target, and redirects any other to its owner (counted in misdirected), as a stale map's client would
be. --ais-smap-omit N leaves the last N targets out of the map it serves (a map older than the cluster);
--ais-smap-scheme https makes the map's URLs https:// (the targets still answer http).

With --tls-cert FILE --tls-key FILE every listener (the proxy and each target) serves HTTPS, and the map,
the redirects and /peer/stats name https:// URLs. /peer/stats counts the TCP connections each listener
accepted ("connections", per daemon id, "proxy" for --port), so a client's handshakes can be checked.

With --ais-backend URL the AIStore stand-in is a caching tier in front of URL: a GET of an object it
does not hold fetches URL/<object> (counted in backend_fetches), keeps it and serves it; later GETs
are served from what it keeps, until evicted.

  /<bucket>[/<key>]      with --sigv4-secret and a SigV4 Authorization header: an S3 stand-in that checks AWS Signature Version 4 (--sigv4-secret) the way AWS
                         documents it, independently of libcurl: GET/PUT objects, ListObjectsV2 in two
                         pages whose continuation token needs percent-encoding; 403 SignatureDoesNotMatch

--ais-put-late-ms MS: an AIStore target stores each PUT at once and answers it MS later (a client whose
timeout is shorter gives up on a PUT the stand-in holds).

--stall-at N makes the N-th request (counted from 1 over all paths) start a stall of --stall-ms:
every response due before the stall ends waits for its end. The AIStore part is a stand-in written
from AIStore's public API documentation (AIStore itself cannot run here), not AIStore.
"""
import argparse
import hashlib
import hmac
import json
import re
import socket
import ssl
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import quote, unquote, urlsplit

lock = threading.Lock()
state = {"count": 0, "stall_end": 0.0, "store": {}, "backend_fetches": 0, "ranged_gets": 0, "evictions": [], "jobs": {},
         "status_polls": 0, "target_requests": {}, "misdirected": 0, "connections": {}}
TARGETS = []  # the cluster's targets: (daemon id, port), with --ais-targets
TLS = None  # the server-side ssl.SSLContext, with --tls-cert
SCHEME = "http"
M64 = (1 << 64) - 1
MLCG32 = 1103515245  # AIStore's xxhash seed (cmn/cos)
PROVIDERS = {"s3": "aws", "gs": "gcp", "az": "azure"}  # aliases to the names in a uname


def _rotl(x, r):
    return ((x << r) | (x >> (64 - r))) & M64


def xxh64(data, seed=0):
    """XXH64 as its specification (xxhash's doc/xxhash_spec.md) describes it."""
    p1, p2, p3, p4, p5 = (0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0x85EBCA77C2B2AE63,
                          0x27D4EB2F165667C5)

    def rnd(acc, lane):
        return (_rotl((acc + lane * p2) & M64, 31) * p1) & M64

    n, i = len(data), 0
    if n >= 32:
        v = [(seed + p1 + p2) & M64, (seed + p2) & M64, seed, (seed - p1) & M64]
        while i + 32 <= n:
            for k in range(4):
                v[k] = rnd(v[k], int.from_bytes(data[i + 8 * k:i + 8 * k + 8], "little"))
            i += 32
        acc = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)) & M64
        for k in range(4):
            acc = ((acc ^ rnd(0, v[k])) * p1 + p4) & M64
    else:
        acc = (seed + p5) & M64
    acc = (acc + n) & M64
    while i + 8 <= n:
        acc = (_rotl(acc ^ rnd(0, int.from_bytes(data[i:i + 8], "little")), 27) * p1 + p4) & M64
        i += 8
    if i + 4 <= n:
        acc = (_rotl(acc ^ (int.from_bytes(data[i:i + 4], "little") * p1 & M64), 23) * p2 + p3) & M64
        i += 4
    while i < n:
        acc = (_rotl(acc ^ (data[i] * p5 & M64), 11) * p1) & M64
        i += 1
    acc = ((acc ^ (acc >> 33)) * p2) & M64
    acc = ((acc ^ (acc >> 29)) * p3) & M64
    return acc ^ (acc >> 32)


def xoshiro_hash(seed):
    """AIStore's cmn/xoshiro256.Hash: two splitmix64 steps, then xoshiro256**'s scrambler."""
    z = seed
    for _ in range(2):
        z = (z + 0x9E3779B97F4A7C15) & M64
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        z ^= z >> 31
    return (_rotl((z * 5) & M64, 7) * 9) & M64


def hrw_owner(targets, provider, bucket, obj):
    """The (id, port) of targets that owns bucket/obj: AIStore's Smap.HrwName2T."""
    uname = "%s/@#/%s/%s" % (PROVIDERS.get(provider, provider), bucket, obj)
    digest = xxh64(uname.encode(), MLCG32)
    return max(targets, key=lambda t: xoshiro_hash(xxh64(t[0].encode(), MLCG32) ^ digest))
# Never through an environment proxy: the backend is on loopback.
NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def expand_template(tmpl):
    """Names of an AIStore range template "prefix{first..last[..step]}suffix" (one range, as railbench sends)."""
    m = re.fullmatch(r"(.*)\{(\d+)\.\.(\d+)(?:\.\.(\d+))?\}(.*)", tmpl, re.S)
    if not m:
        raise ValueError("not a template: %r" % tmpl)
    first, last, step = int(m.group(2)), int(m.group(3)), int(m.group(4) or 1)
    width = min(len(m.group(2)), len(m.group(3)))
    return ["%s%0*d%s" % (m.group(1), width, i, m.group(5)) for i in range(first, last + 1, step)]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def setup(self):
        super().setup()
        if TLS:
            self.connection.do_handshake()  # in the connection's thread, not the accepting one
        # Headers and body go out in separate writes: without this, Nagle plus delayed ACKs add 40 ms.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, fmt, *args):  # quiet
        pass

    def arrive(self):
        now = time.monotonic()
        with lock:
            state["count"] += 1
            if ARGS.stall_at and state["count"] == ARGS.stall_at:
                state["stall_end"] = now + ARGS.stall_ms / 1000.0
        return now

    def wait_until(self, due):
        delay = due - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        # A response that falls due while the stall lasts is held until it ends.
        with lock:
            stall_end = state["stall_end"]
        delay = stall_end - time.monotonic()
        if delay > 0:
            time.sleep(delay)

    def body_in(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def send(self, code, body, ctype="application/octet-stream", extra=None):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_PUT(self):
        self.handle_any()

    def do_GET(self):
        self.handle_any()

    def do_DELETE(self):
        self.handle_any()

    def do_HEAD(self):
        self.handle_any()

    def handle_any(self):
        t0 = self.arrive()
        url = urlsplit(self.path)
        path = url.path
        data = self.body_in()
        parts = path.split("/")
        if path.startswith("/status/"):
            self.wait_until(t0 + ARGS.delay_ms / 1000.0)
            code = int(parts[2])
            return self.send(code, b'{"message":"peer: status %d as asked","status":%d}' % (code, code),
                             "application/json")
        if path.startswith("/reset/"):
            self.close_connection = True
            return
        if path.startswith("/short/"):
            self.send_response(200)
            self.send_header("Content-Length", "1000")
            self.end_headers()
            self.wfile.write(b"x" * 500)
            self.wfile.flush()
            self.close_connection = True
            return
        if path.startswith("/slow/"):
            time.sleep(3)
            return self.send(200, b"late")
        if path.startswith("/redirect/"):
            return self.send(307, b"", extra={"Location": self.path})
        if path.startswith("/redirect-https/"):
            loc = "https://127.0.0.1:%d%s" % (self.server.server_address[1], self.path)
            return self.send(307, b"", extra={"Location": loc})
        if path.startswith("/v1/objects/") and TARGETS:
            return self.ais_cluster(url, parts, data)
        if path.startswith("/v1/objects/"):
            loc = "%s://127.0.0.1:%d/target%s" % (SCHEME, self.server.server_address[1], self.path)
            return self.send(307, b"", extra={"Location": loc})
        if path == "/v1/daemon" and "what=smap" in url.query and TARGETS:
            return self.ais_smap()
        if path.startswith("/target/v1/objects/"):
            return self.ais_object("/".join(parts[4:]), data)
        if path.startswith("/v1/buckets/") and self.command == "DELETE":
            return self.ais_evict(parts[3], url.query, data)
        if path.startswith("/v1/buckets/"):
            return self.ais_list(parts[3], data)
        if path == "/v1/cluster" and "what=status" in url.query:
            return self.ais_status(data)
        if path == "/peer/stats":
            with lock:
                body = json.dumps({"backend_fetches": state["backend_fetches"], "evictions": state["evictions"],
                                   "status_polls": state["status_polls"], "held": sorted(state["store"]),
                                   "ranged_gets": state["ranged_gets"], "target_requests": state["target_requests"],
                                   "misdirected": state["misdirected"], "connections": state["connections"]})
            return self.send(200, body.encode(), "application/json")
        if ARGS.sigv4_secret and (self.headers.get("Authorization") or "").startswith("AWS4-"):
            return self.s3_signed(url)
        self.wait_until(t0 + ARGS.delay_ms / 1000.0)
        return self.send(200, b"\0" * ARGS.size)

    def sigv4_ok(self, url):
        """Recomputes the request's SigV4 signature (AWS General Reference, "Create a signed AWS API request")."""
        auth = self.headers.get("Authorization") or ""
        if not auth.startswith("AWS4-HMAC-SHA256 "):
            return False
        fields = dict(f.strip().split("=", 1) for f in auth[len("AWS4-HMAC-SHA256 "):].split(","))
        _key, date, region, service, _term = fields["Credential"].split("/")
        signed = fields["SignedHeaders"].split(";")
        # Canonical query: every name and value URI-encoded (unreserved kept), sorted by name.
        pairs = []
        for item in filter(None, url.query.split("&")):
            k, _, v = item.partition("=")
            pairs.append((quote(unquote(k), safe="-_.~"), quote(unquote(v), safe="-_.~")))
        query = "&".join("%s=%s" % kv for kv in sorted(pairs))
        headers = "".join("%s:%s\n" % (h, " ".join((self.headers.get(h) or "").split())) for h in signed)
        payload = self.headers.get("x-amz-content-sha256")
        if payload is None:
            return False
        canonical = "\n".join([self.command, quote(unquote(url.path), safe="/-_.~"), query, headers,
                               ";".join(signed), payload])
        to_sign = "\n".join(["AWS4-HMAC-SHA256", self.headers.get("x-amz-date") or "",
                             "/".join([date, region, service, "aws4_request"]),
                             hashlib.sha256(canonical.encode()).hexdigest()])
        k = ("AWS4" + ARGS.sigv4_secret).encode()
        for part in (date, region, service, "aws4_request"):
            k = hmac.new(k, part.encode(), hashlib.sha256).digest()
        return hmac.compare_digest(hmac.new(k, to_sign.encode(), hashlib.sha256).hexdigest(), fields["Signature"])

    def s3_signed(self, url):
        if not self.sigv4_ok(url):
            return self.send(403, b"<?xml version=\"1.0\"?><Error><Code>SignatureDoesNotMatch</Code><Message>"
                             b"The request signature we calculated does not match the signature you provided."
                             b"</Message></Error>", "application/xml")
        parts = url.path.split("/")
        if len(parts) <= 2 or not parts[2]:
            # ListObjectsV2 in two pages; the token has '+', '/' and '=' so it must be encoded to sign.
            token = "pg+2/next=="
            if "continuation-token=" in url.query:
                keys, more = ["k3", "k4"], ""
            else:
                keys, more = ["k0", "k1", "k2"], token
            body = "<?xml version=\"1.0\"?><ListBucketResult><Name>%s</Name>" % parts[1]
            body += "".join("<Contents><Key>%s</Key><Size>%d</Size></Contents>" % (k, ARGS.size) for k in keys)
            body += "<IsTruncated>%s</IsTruncated>" % ("true" if more else "false")
            if more:
                body += "<NextContinuationToken>%s</NextContinuationToken>" % more
            return self.send(200, (body + "</ListBucketResult>").encode(), "application/xml")
        return self.send(200, b"" if self.command == "PUT" else b"\0" * ARGS.size)

    def ais_object(self, key, data):
        """An AIStore target's object request on key ("bucket/object"): PUT, GET (ranged too), HEAD, DELETE."""
        if self.command == "PUT":
            with lock:
                state["store"][key] = data
            if ARGS.ais_put_late_ms:  # stored, answered late: a client that gave up cannot know
                time.sleep(ARGS.ais_put_late_ms / 1000.0)
            return self.send(200, b"")
        if self.command == "DELETE":
            with lock:
                gone = state["store"].pop(key, None)
            if gone is None:
                return self.send(404, b'{"message":"object does not exist","status":404}', "application/json")
            return self.send(200, b"")
        with lock:
            obj = state["store"].get(key)
        if obj is None and ARGS.ais_backend:
            obj = self.ais_fetch(key)
        if obj is None:
            return self.send(404, b'{"message":"object does not exist","status":404}', "application/json")
        rng = re.fullmatch(r"bytes=(\d*)-(\d+)", self.headers.get("Range") or "")
        if rng and not rng.group(1) and obj:  # "bytes=-N": the last N bytes
            rng = re.fullmatch(r"(\d+)-(\d+)", "%d-%d" % (max(0, len(obj) - int(rng.group(2))), len(obj) - 1))
        if rng and rng.group(1) and int(rng.group(1)) < len(obj):
            a, b = int(rng.group(1)), min(int(rng.group(2)), len(obj) - 1)
            with lock:
                state["ranged_gets"] += 1
            return self.send(206, obj[a:b + 1], extra={"Content-Range": "bytes %d-%d/%d" % (a, b, len(obj))})
        return self.send(200, obj)

    def ais_cluster(self, url, parts, data):
        """/v1/objects/B/O in a cluster: the proxy redirects to the owner; a target serves what it owns."""
        prov = re.search(r"(?:^|&)provider=([^&]*)", url.query)
        bucket, obj = parts[3], unquote("/".join(parts[4:]))
        tid, port = hrw_owner(TARGETS, prov.group(1) if prov else "ais", bucket, obj)
        me = getattr(self.server, "ais_id", None)
        if me != tid:
            if me is not None:
                with lock:
                    state["misdirected"] += 1
            loc = "%s://127.0.0.1:%d%s" % (SCHEME, port, self.path)
            return self.send(307, b"", extra={"Location": loc})
        with lock:
            state["target_requests"][me] = state["target_requests"].get(me, 0) + 1
        return self.ais_object(bucket + "/" + obj, data)

    def ais_smap(self):
        """AIStore's cluster map as GET /v1/daemon?what=smap returns it (core/meta/smap.go's JSON tags)."""
        def node(tid, port, kind):
            url = "%s://127.0.0.1:%d" % (ARGS.ais_smap_scheme, port)
            net = {"node_ip_addr": "127.0.0.1", "daemon_port": str(port), "direct_url": url}
            return {"public_net": net, "intra_data_net": net, "intra_control_net": net, "daemon_type": kind,
                    "daemon_id": tid, "flags": 0, "id_digest": xxh64(tid.encode(), MLCG32)}
        shown = TARGETS[:len(TARGETS) - ARGS.ais_smap_omit]
        proxy = node("p%d" % ARGS.port, ARGS.port, "proxy")
        tmap = {t: node(t, p, "target") for t, p in shown}
        smap = {"pmap": {proxy["daemon_id"]: proxy}, "proxy_si": proxy, "tmap": tmap, "uuid": "peer-cluster",
                "creation_time": "", "version": "7"}
        return self.send(200, json.dumps(smap).encode(), "application/json")

    def ais_fetch(self, key):
        """A cold read: the object from the backend, kept for the next GET."""
        name = key.split("/", 1)[1]
        try:
            with NO_PROXY.open(ARGS.ais_backend + "/" + name, timeout=30) as resp:
                obj = resp.read()
        except urllib.error.HTTPError:
            return None
        with lock:
            state["backend_fetches"] += 1
            state["store"][key] = obj
        return obj

    def ais_evict(self, bucket, query, data):
        try:
            msg = json.loads(data or b"{}")
        except ValueError:
            return self.send(400, b'{"message":"bad JSON","status":400}', "application/json")
        action, value = msg.get("action"), msg.get("value") or {}
        if action == "evict-remote-bck":
            with lock:
                state["evictions"].append({"action": action, "keep_bck_md": "keep_bck_md=true" in query})
                for k in [k for k in state["store"] if k.startswith(bucket + "/")]:
                    del state["store"][k]
            return self.send(200, b"")
        if action != "evict-listrange":
            return self.send(400, b'{"message":"unknown action","status":400}', "application/json")
        try:
            names = expand_template(value["template"]) if value.get("template") else list(value["objnames"])
        except (KeyError, TypeError, ValueError) as e:
            return self.send(400, json.dumps({"message": "bad list-range: %s" % e, "status": 400}).encode(),
                             "application/json")
        with lock:
            state["evictions"].append({"action": action, "value": value, "names": len(names)})
            for n in names:
                state["store"].pop(bucket + "/" + n, None)
            xid = "peer-xact-%d" % len(state["evictions"])
            state["jobs"][xid] = time.time() + ARGS.ais_evict_ms / 1000.0
        return self.send(200, xid.encode(), "text/plain")

    def ais_status(self, data):
        try:
            xid = json.loads(data or b"{}").get("id", "")
        except ValueError:
            return self.send(400, b'{"message":"bad JSON","status":400}', "application/json")
        with lock:
            state["status_polls"] += 1
            end = state["jobs"].get(xid)
        if end is None:
            return self.send(404, b'{"message":"no such job","status":404}', "application/json")
        end_ns = int(end * 1e9) if time.time() >= end else 0
        body = json.dumps({"kind": "evict-listrange", "uuid": xid, "err": "", "end_time": end_ns, "aborted": False})
        return self.send(200, body.encode(), "application/json")

    def ais_list(self, bucket, data):
        try:
            msg = json.loads(data or b"{}")
        except ValueError:
            return self.send(400, b'{"message":"bad JSON","status":400}', "application/json")
        if msg.get("action") != "list":
            return self.send(400, b'{"message":"expected action list","status":400}', "application/json")
        value = msg.get("value") or {}
        prefix = bucket + "/" + (value.get("prefix") or "")
        with lock:
            names = sorted(k for k in state["store"] if k.startswith(prefix))
            sizes = {k: len(state["store"][k]) for k in names}
        token = value.get("continuation_token") or ""
        if token and value.get("uuid") != "peer-uuid":
            return self.send(400, b'{"message":"continuation without the listing uuid","status":400}',
                             "application/json")
        start = names.index(token) if token in names else 0
        page = names[start:start + ARGS.ais_page]
        nxt = names[start + ARGS.ais_page] if start + ARGS.ais_page < len(names) else ""
        entries = [{"name": k[len(bucket) + 1:], "size": str(sizes[k]), "flags": 64} for k in page]
        body = json.dumps({"uuid": "peer-uuid", "continuation_token": nxt, "entries": entries, "flags": 0})
        return self.send(200, body.encode(), "application/json")


class Server(ThreadingHTTPServer):
    """A listener that counts the connections it accepts and, with --tls-cert, serves them over TLS."""
    daemon_threads = True
    ais_id = None

    def get_request(self):
        sock, addr = self.socket.accept()
        with lock:
            name = self.ais_id or "proxy"
            state["connections"][name] = state["connections"].get(name, 0) + 1
        if TLS:
            sock = TLS.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
        return sock, addr


def main():
    global ARGS, TLS, SCHEME
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--delay-ms", type=float, default=0.0)
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--stall-at", type=int, default=0)
    ap.add_argument("--ais-put-late-ms", type=float, default=0.0)
    ap.add_argument("--stall-ms", type=float, default=1000.0)
    ap.add_argument("--ais-page", type=int, default=100)
    ap.add_argument("--sigv4-secret", default="")
    ap.add_argument("--ais-backend", default="", help="the AIStore stand-in caches this origin's objects")
    ap.add_argument("--ais-evict-ms", type=float, default=300.0, help="how long an eviction job runs")
    ap.add_argument("--ais-targets", default="", help="a cluster: one AIStore target per port (comma-separated)")
    ap.add_argument("--ais-smap-omit", type=int, default=0, help="targets left out of the cluster map served")
    ap.add_argument("--ais-smap-scheme", default="http", help="the scheme of the targets' URLs in the map served")
    ap.add_argument("--tls-cert", default="", help="serve HTTPS with this certificate (PEM)")
    ap.add_argument("--tls-key", default="", help="the certificate's private key (PEM)")
    ARGS = ap.parse_args()
    if ARGS.tls_cert:
        TLS = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        TLS.load_cert_chain(ARGS.tls_cert, ARGS.tls_key or None)
        SCHEME = ARGS.ais_smap_scheme = "https"
    # The default listen backlog (5) drops connects past it, and a retried SYN costs a second.
    ThreadingHTTPServer.request_queue_size = 1024
    # Clients that time out or give up close their end; that is expected here, not worth a traceback.
    ThreadingHTTPServer.handle_error = lambda self, request, address: None
    for port in filter(None, ARGS.ais_targets.split(",")):
        TARGETS.append(("t%d" % int(port), int(port)))
    for tid, port in TARGETS:
        tsrv = Server(("127.0.0.1", port), Handler)
        tsrv.ais_id = tid
        threading.Thread(target=tsrv.serve_forever, daemon=True).start()
    srv = Server(("127.0.0.1", ARGS.port), Handler)
    srv.serve_forever()


if __name__ == "__main__":
    main()
