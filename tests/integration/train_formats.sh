#!/usr/bin/env bash
# needs: ceph mpi
# load train --format parquet, npz and jpeg. Parquet: files --populate writes read back by an independent reader
# (hyparquet: schema, row groups, every value against the seeded payload), epochs that read each file's footer and
# then only the projected column chunks (bytes read = the chunks' sizes hyparquet lists), --row-group-read, 2 ranks
# on a directory and on Ceph RGW, and files that are not what they claim (not Parquet, a truncated footer, a column
# not there, a row group past the end) each one error line and exit 3, with every file the run did not create
# untouched. npz read back by numpy and zipfile, JPEGs by Pillow, each against the payload; npz and JPEG over RGW too.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
S() { jq -c ".summary | $2" "$T/$1/result.json"; }
HYP=$ROOT/tests/grafana/node_modules/hyparquet
[ -d "$HYP" ] || fail "tests/grafana/node_modules/hyparquet missing: run scripts/deps.sh"
CHECK=$ROOT/tests/formats/check_parquet.mjs
CHUNKS=$ROOT/tests/formats/pq_chunks.mjs
# A DLRM-shaped data set scaled down: 200 scalar columns sharing 761 bytes a row (161 FLOAT, 39 of 3 bytes), 1,000
# rows a file in row groups of 256 (4 of them), the first 40 columns read (160 of 761 bytes a row, as DLIO's dlrm).
DLRM=(--format parquet --parquet-schema scalar:200 --sample-size 761 --samples-per-object 1000 --row-group-size 256
    --batch-size 250 --compute-time 1ms --seed 7)
COLS=$(seq -s, -f 'c%g' 0 39)

# 1. file://, 2 ranks: --populate writes 4 files, then 2 epochs read c0..c39 verified. Every row is read (8 steps of
#    250 rows a rank), so an epoch reads every row group's 40 chunks: exactly what hyparquet lists for them.
D=$T/dlrm
mkdir -p "$D"
rb_mpirun 2 "$RB" load train "file://$D" --prefix pq- --objects 4 "${DLRM[@]}" --columns "$COLS" --populate --verify \
    --epochs 2 --out "$T/file" --quiet >/dev/null
fb=$(S file .dataset.parquet.file_bytes)
assert_eq "4 files on disk, each of the layout's bytes" "4 $fb" "$(ls "$D" | wc -l) $(stat -c %s "$D"/pq-* | sort -u)"
for f in pq-00000000 pq-00000003; do
    out=$(node "$CHECK" "$D/$f" "$f" 7 scalar 200 761 1000 256) || fail "hyparquet: $out"
    assert_eq "hyparquet reads $f: rows, row groups, columns, values" "ok rows=1000 row_groups=4 columns=200 values=200000" "$out"
done
read -r rgs proj1 < <(node "$CHUNKS" "$D/pq-00000000" $(tr , ' ' <<<"$COLS"))
assert_eq "hyparquet: 4 row groups" 4 "$rgs"
assert_eq "epochs: steps, samples, errors" "[[8,4000,0],[8,4000,0]]" "$(S file '[.train_epochs[] | [.steps, .samples, .errors]]')"
assert_eq "each epoch's bytes = the projected chunks of the 4 files (hyparquet's sizes)" "[$((4 * proj1)),$((4 * proj1))]" \
    "$(S file '[.train_epochs[].bytes]')"
assert_eq "parquet record: projected = requested = read; chunk requests (40 x 4 row groups x 4 files x 2 epochs)" \
    "[$((8 * proj1)),$((8 * proj1)),$((8 * proj1)),1280]" \
    "$(S file '.dataset.parquet | [.projected_bytes, .requested_bytes, .bytes_read, .chunk_requests]')"
assert_eq "footers: once per file and rank (4 to 8), two reads each" true \
    "$(S file '.dataset.parquet | .footers >= 4 and .footers <= 8 and .footer_requests == 2 * .footers')"
ok "file: read $(S file .dataset.parquet.bytes_read) of $((4 * fb)) bytes a pass would take whole"

# --row-group-read: one request per row group over its 40 side-by-side chunks: the same bytes in 16 requests.
"$RB" load train "file://$D" --prefix pq- --objects 4 "${DLRM[@]}" --columns "$COLS" --row-group-read --verify \
    --out "$T/rg" --quiet >/dev/null
assert_eq "--row-group-read: requests, bytes, errors" "[16,$((4 * proj1)),0]" \
    "$(S rg '.train_epochs[0] | [.requests, .bytes, .errors]')"
# No --columns: every chunk, the whole file but its magic and footer.
read -r _ all1 < <(node "$CHUNKS" "$D/pq-00000000")
"$RB" load train "file://$D" --prefix pq- --objects 4 "${DLRM[@]}" --out "$T/all" --quiet >/dev/null
assert_eq "every column: an epoch reads every chunk" "$((4 * all1))" "$(S all '.train_epochs[0].bytes')"

# 2. A FLUX-shaped file: 5 float32 list columns sharing 21,652 bytes a row (1,083 or 1,082 floats each), 24 rows in
#    row groups of 8, read back by hyparquet value by value.
F=$T/flux
mkdir -p "$F"
"$RB" load train "file://$F" --prefix fx- --objects 2 --format parquet --parquet-schema list:5 --sample-size 21652 \
    --samples-per-object 24 --row-group-size 8 --batch-size 8 --compute-time 1ms --populate --verify --out "$T/flux" \
    --quiet >/dev/null
out=$(node "$CHECK" "$F/fx-00000001" fx-00000001 1 list 5 21652 24 8) || fail "hyparquet: $out"
assert_eq "hyparquet reads the float lists" "ok rows=24 row_groups=3 columns=5 values=129912" "$out"
assert_eq "flux epoch: samples, errors" "[48,0]" "$(S flux '.train_epochs[0] | [.samples, .errors]')"

# 2b. npz, as numpy.savez writes DLIO's samples: 6 files of 2 samples of 300,000 +- 50,000 bytes from 2 ranks,
#     read back by numpy and zipfile (CRCs, stored members, shapes, x's bytes = the payload, y zeros); an epoch reads
#     each file whole, verified: the bytes on disk.
N=$T/npz
mkdir -p "$N"
rb_mpirun 2 "$RB" load train "file://$N" --prefix img- --objects 6 --format npz --samples-per-object 2 \
    --sample-size 300000/50000 --batch-size 2 --compute-time 1ms --seed 3 --populate --verify --out "$T/npz" \
    --quiet >/dev/null
out=$(/usr/bin/python3 "$ROOT/tests/formats/check_npz.py" 3 2 "$N"/img-*) || fail "numpy: $out"
assert_eq "numpy reads the 6 npz files" 6 "$(grep -c '^ok img-0000000[0-5] x=[0-9]*x[0-9]*x2 ' <<<"$out")"
ok "numpy: $(head -1 <<<"$out")"
assert_eq "npz epoch: samples, requests, bytes (the files on disk), errors" "[12,6,$(cat "$N"/img-* | wc -c),0]" \
    "$(S npz '.train_epochs[0] | [.samples, .requests, .bytes, .errors]')"
assert_eq "npz: recorded format" '"npz"' "$(S npz .dataset.format)"
# --decode: each file's npy headers parsed and arrays read: the arrays' bytes (x's, and 2 int64 labels a file).
"$RB" load train "file://$N" --prefix img- --objects 6 --format npz --samples-per-object 2 --batch-size 2 \
    --compute-time 1ms --decode --out "$T/npzdec" --quiet >/dev/null
xbytes=$(($(sed -n 's/.* bytes=\([0-9]*\) .*/\1/p' <<<"$out" | paste -sd+)))
assert_eq "npz --decode: files, failed, decoded bytes" "[6,0,$((xbytes + 6 * 16))]" \
    "$(S npzdec '.dataset.decode | [.files, .failed, .decoded_bytes]')"
assert_eq "npz --decode: decode CPU measured" true "$(S npzdec '.dataset.decode.cpu_s > 0')"

# 2c. JPEG: 6 images of RetinaNet's 322,957 bytes from 2 ranks, each exactly that size, decoded by Pillow, its
#     comment the file's payload; and 4 of 200,000 +- 20,000 bytes (each the size drawn: the epoch's bytes).
J=$T/jpg
mkdir -p "$J/a" "$J/b"
rb_mpirun 2 "$RB" load train "file://$J/a" --prefix img- --objects 6 --format jpeg --sample-size 322957 \
    --batch-size 3 --compute-time 1ms --populate --verify --out "$T/jpeg" --quiet >/dev/null
out=$(/usr/bin/python3 "$ROOT/tests/formats/check_jpeg.py" 1 322957 "$J"/a/img-*) || fail "Pillow: $out"
assert_eq "Pillow decodes the 6 JPEGs of 322,957 bytes" 6 "$(grep -c '^ok img-0000000[0-5] [0-9]*x[0-9]* bytes=322957 ' <<<"$out")"
ok "Pillow: $(head -1 <<<"$out")"
assert_eq "jpeg epoch: samples, requests, bytes, errors" "[6,6,$((6 * 322957)),0]" \
    "$(S jpeg '.train_epochs[0] | [.samples, .requests, .bytes, .errors]')"
# --decode: libjpeg decodes each (its pixels x 3 bytes); a JPEG with its rows overwritten decodes with a warning:
# failed, one warning line, the run goes on.
dims=$(sed -n '1s/^ok img-00000000 \([0-9]*\)x\([0-9]*\) .*/\1 * \2/p' <<<"$out")
cp "$J"/a/img-00000005 "$J/a/img-00000006"
dd if=/dev/zero of="$J/a/img-00000006" bs=1 seek=200000 count=3000 conv=notrunc status=none
"$RB" load train "file://$J/a" --prefix img- --objects 7 --format jpeg --batch-size 7 --compute-time 1ms --decode \
    --out "$T/jpgdec" --quiet >/dev/null 2>"$T/jpgdec.err"
assert_eq "jpeg --decode: files, failed, decoded bytes" "[7,1,$((6 * 3 * dims))]" \
    "$(S jpgdec '.dataset.decode | [.files, .failed, .decoded_bytes]')"
grep -q 'warning: --decode: file://.*"img-00000006" (322957 bytes) does not decode as a JPEG' "$T/jpgdec.err" ||
    fail "no warning for the corrupt JPEG: $(cat "$T/jpgdec.err")"
rm "$J/a/img-00000006"
"$RB" load train "file://$J/b" --prefix img- --objects 4 --format jpeg --sample-size 200000/20000 --batch-size 2 \
    --compute-time 1ms --populate --verify --out "$T/jpeg2" --quiet >/dev/null
out=$(/usr/bin/python3 "$ROOT/tests/formats/check_jpeg.py" 1 0 "$J"/b/img-*) || fail "Pillow: $out"
assert_eq "Pillow decodes the 4 JPEGs of drawn sizes" 4 "$(grep -c '^ok ' <<<"$out")"
assert_eq "jpeg: the epoch's bytes are the files' (sizes drawn, 4 different)" "$(cat "$J"/b/img-* | wc -c) 4" \
    "$(S jpeg2 '.train_epochs[0].bytes') $(stat -c %s "$J"/b/img-* | sort -u | wc -l)"

# 2d. Presets: --workload dlrm --scale 0.004 is 4 of DLRM's 1,024 files, Parquet of 200 columns (761 bytes a row) with
#     c0..c39 read by default; rows, row groups, batch and compute time overridden to fit. retinanet: JPEGs of
#     322,957 bytes, 35 of 1,170,301 (a batch of 24 and some); with no --compute-time, the preset's (B200's 47.55 ms) and
#     its 8 read threads.
W=$T/presets
mkdir -p "$W/dlrm" "$W/ret"
"$RB" load train "file://$W/dlrm" --prefix pq- --workload dlrm --scale 0.004 --samples-per-object 1000 --row-group-size 256 \
    --batch-size 250 --compute-time 1ms --seed 7 --populate --verify --out "$T/wdlrm" --quiet >/dev/null
assert_eq "dlrm preset: workload, au_threshold, files, format, columns read, bytes = the projected chunks" \
    "[\"dlrm\",0.7,4,\"parquet\",40,$((4 * proj1))]" \
    "$(jq -c '[.config.workload, .summary.au_threshold, .summary.dataset.objects, .summary.dataset.format,
        (.summary.dataset.parquet.columns | length), .summary.train_epochs[0].bytes]' "$T/wdlrm/result.json")"
cmp "$W/dlrm/pq-00000002" "$D/pq-00000002" || fail "the dlrm preset's file differs from the same set written by options"
"$RB" load train "file://$W/ret" --prefix img- --workload retinanet --scale 0.00003 --compute-time 1ms --populate \
    --verify --out "$T/wret" --quiet >/dev/null
assert_eq "retinanet preset: files, format, batch, au_threshold, bytes" "[35,\"jpeg\",24,0.85,$((35 * 322957))]" \
    "$(jq -c '[.summary.dataset.objects, .summary.dataset.format, .summary.workload.batch_size, .summary.au_threshold,
        .summary.populate.bytes]' "$T/wret/result.json")"
"$RB" load train "file://$W/ret" --prefix img- --workload retinanet --scale 0.00003 --out "$T/wret2" --quiet >/dev/null
assert_eq "retinanet preset's compute time (ns) and read threads" "[47550000,8]" \
    "$(jq -c '[.summary.workload.compute_ns, .summary.workload.read_threads]' "$T/wret2/result.json")"
assert_exit 2 "no --compute-time and no --workload" "$RB" load train "file://$W/ret" --prefix img- --objects 4 --quiet
assert_stderr_line '^railbench: error: load train: give --compute-time D \(per step\) or --workload resnet50, unet3d, cosmoflow, retinanet, flux or dlrm$'
assert_exit 2 "--scale without a preset's files" "$RB" load train "file://$W/ret" --workload resnet50 --scale 0.5 --quiet
assert_stderr_line '^railbench: error: --scale: give --workload unet3d, retinanet, flux or dlrm'

# 3. Files that are not what they claim: one error line each, exit 3; the files (and a bystander) untouched.
B=$T/bad
mkdir -p "$B"
head -c 5000 /dev/urandom >"$B/noise.parquet"
good=$D/pq-00000001
flen=$(tail -c 8 "$good" | head -c 4 | od -An -tu4 | tr -d ' ')
{ head -c 100 "$good"; tail -c 8 "$good"; } >"$B/short-footer.parquet"
{ head -c 2000 "$good"; tail -c $((flen + 8)) "$good"; } >"$B/cut-data.parquet"
cp "$good" "$B/pq-00000001"
echo "not mine" >"$B/bystander.txt"
before=$(cd "$B" && sha256sum * | sha256sum)
bad() { # FILE PATTERN [OPTIONS...]: exit 3 and the error line
    local file=$1 pattern=$2
    shift 2
    assert_exit 3 "$file" "$RB" load train "file://$B" --filelist <(echo "$file") "${DLRM[@]}" "$@" --quiet
    assert_stderr_line "^railbench: error: --format parquet: file://$B \"$file\": $pattern\$"
}
bad noise.parquet 'not a Parquet file \(no "PAR1" at its end\)'
bad short-footer.parquet "its footer \($flen bytes, the last 8 bytes say\) is longer than the file \(108 bytes\): a truncated footer"
bad cut-data.parquet "row group 0's column \"c[0-9]+\" \(bytes [0-9]+ to [0-9]+\) lies past the column data's end \(byte 2000\): a row group past the end of the file"
bad pq-00000001 'no column "c200" \(the footer.s schema has no such top-level column\)' --columns c0,c200
bad pq-00000001 'holds 1000 rows \(its footer\), --samples-per-object is 999' --samples-per-object 999
bad missing.parquet 'No such file or directory'
# npz and JPEG read whole: the first file's first bytes are checked (a zip of .npy members; SOI).
assert_exit 3 "a Parquet file read as npz" "$RB" load train "file://$B" --filelist <(echo pq-00000001) --format npz \
    --compute-time 1ms --quiet
assert_stderr_line "^railbench: error: --format npz: file://$B \"pq-00000001\": not an npz file \(no zip local header at its start\)\$"
assert_exit 3 "noise read as JPEG" "$RB" load train "file://$B" --filelist <(echo noise.parquet) --format jpeg \
    --compute-time 1ms --quiet
assert_stderr_line "^railbench: error: --format jpeg: file://$B \"noise.parquet\": not a JPEG \(no SOI marker at its start\)\$"
assert_eq "the files the runs read, and a bystander, untouched" "$before" "$(cd "$B" && sha256sum * | sha256sum)"
assert_exit 2 "--columns without --format parquet" "$RB" load train "file://$B" --filelist <(echo x) --columns c0 \
    --compute-time 1ms --quiet
assert_stderr_line '^railbench: error: --columns, --parquet-schema, --row-group-size, --row-group-read: give --format parquet$'
assert_exit 2 "a column list with a hole" "$RB" load train "file://$B" --filelist <(echo x) --format parquet \
    --columns c0,,c1 --compute-time 1ms --quiet
assert_stderr_line '^railbench: error: --columns "c0,,c1": expected column names separated by commas'
assert_exit 2 "--verify without a sample size" "$RB" load train "file://$B" --filelist <(echo x) --format npz \
    --verify --compute-time 1ms --quiet
assert_stderr_line '^railbench: error: --format npz --verify: give --sample-size SIZE or --workload'
assert_exit 2 "float lists that do not share out" "$RB" load train "file://$B" --prefix q- --objects 1 --format parquet \
    --parquet-schema list:5 --sample-size 10 --populate --compute-time 1ms --quiet
assert_stderr_line '^railbench: error: --format parquet --parquet-schema list:5 --sample-size 10: 10 bytes a row do not share out over 5 float list'

# 3b. http:// (nginx, WebDAV PUTs): the DLRM set written, then read by footer and projected chunks: every GET a 206
#     (2 per footer, one per chunk), the bytes the projected chunks'.
chmod 755 "$T"
nginx_dav web "access_log $T/web/access.log;"
"$RB" load train "$DAV_URL/pq" --prefix pq- --objects 4 "${DLRM[@]}" --columns "$COLS" --populate --verify \
    --out "$T/http" --quiet >/dev/null
assert_eq "http epoch: bytes (the projected chunks), errors" "[$((4 * proj1)),0]" \
    "$(S http '.train_epochs[0] | [.bytes, .errors]')"
gets() { awk -v st="$1" '$6 == "\"GET" && $7 ~ /\/pq\/pq-/ && (st == "" || $9 == st)' "$T/web/access.log" | wc -l; }
assert_eq "nginx: a 206 per footer read and chunk, no other GET" \
    "$(S http '.dataset.parquet | .chunk_requests + .footer_requests') $(S http '.dataset.parquet | .chunk_requests + .footer_requests')" \
    "$(gets 206) $(gets '')"

# 3c. ais:// (the AIStore stand-in of tests/servers/peer.py: proxy -> target redirects), 2 ranks: the DLRM set PUT,
#     then read by footer (a suffix Range) and projected chunks: a 206 per footer read and chunk, the projected bytes.
AP=$(free_port)
bg python3 "$ROOT/tests/servers/peer.py" --port "$AP"
wait_port "$AP"
rb_mpirun 2 "$RB" load train ais://pqset/dlrm/ --endpoint "http://127.0.0.1:$AP" --prefix pq- --objects 4 "${DLRM[@]}" \
    --columns "$COLS" --populate --verify --out "$T/ais" --quiet >/dev/null
assert_eq "ais epoch: bytes (the projected chunks), errors" "[$((4 * proj1)),0]" "$(S ais '.train_epochs[0] | [.bytes, .errors]')"
assert_eq "the stand-in: a 206 per footer read and chunk" "$(S ais '.dataset.parquet | .chunk_requests + .footer_requests')" \
    "$(curl -s "http://127.0.0.1:$AP/peer/stats" | jq .ranged_gets)"

# 4. s3:// on Ceph RGW, 2 ranks: --populate PUTs the files (signed), then an epoch reads c0..c39 verified, each chunk
#    one ranged GET. RGW logs a 206 per footer read and per chunk, and no whole GET; the bytes are the projected
#    chunks' (hyparquet's sizes of the files written to the directory above: the same layout).
rgw_up
rgw_bucket pqset
unset AWS_SESSION_TOKEN AWS_PROFILE AWS_SHARED_CREDENTIALS_FILE || true
rb_mpirun 2 "$RB" load train s3://pqset/dlrm/ --endpoint "$RGW_ENDPOINT" --prefix pq- --objects 4 "${DLRM[@]}" \
    --columns "$COLS" --populate --verify --out "$T/s3" --quiet >/dev/null
assert_eq "s3 epoch: steps, samples, bytes (the projected chunks), errors" "[8,4000,$((4 * proj1)),0]" \
    "$(S s3 '.train_epochs[0] | [.steps, .samples, .bytes, .errors]')"
reqs=$(S s3 '.dataset.parquet | .chunk_requests + .footer_requests')
assert_eq "RGW: a 206 per chunk and footer read" "$reqs" "$(rgw_seen 'GET /pqset/dlrm/pq-[0-9]+' 206)"
assert_eq "RGW: no whole GET of a file" 0 "$(rgw_seen 'GET /pqset/dlrm/pq-[0-9]+' 200)"
# npz and JPEG over s3:// as well: written (signed PUTs), then an epoch verified byte for byte.
for f in npz jpeg; do
    "$RB" load train s3://pqset/$f/ --endpoint "$RGW_ENDPOINT" --prefix x- --objects 4 --format $f \
        --sample-size 100000 --batch-size 2 --compute-time 1ms --populate --verify --decode --out "$T/s3-$f" \
        --quiet >/dev/null
    assert_eq "s3 $f epoch: samples, requests, errors" "[4,4,0]" "$(S "s3-$f" '.train_epochs[0] | [.samples, .requests, .errors]')"
    assert_eq "s3 $f --decode: files, failed" "[4,0]" "$(S "s3-$f" '.dataset.decode | [.files, .failed]')"
done
assert_eq "s3 jpeg: 4 x 100,000 bytes" 400000 "$(S s3-jpeg '.train_epochs[0].bytes')"
ok "train_formats: all checks passed"
