#!/usr/bin/env bash
# needs: -
# railbench fabric overhead: the AIStore write-up's arithmetic, the Linux MTU convention, header stacks, bad input.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

# Defaults: 10 MiB, MTU 9000, 66 header bytes (14 Ethernet outside the MTU, 52 IP+TCP inside): 8948 a packet.
"$RB" fabric overhead --json >"$T/d.json"
assert_jq "$T/d.json" '.headers.per_packet_bytes == 66 and .rows[0].payload_per_packet_bytes == 8948' "66 bytes a packet, MSS 8948"
assert_jq "$T/d.json" '.rows[0].packets == 1172 and .rows[0].header_bytes == 77352 and .rows[0].wire_bytes == 10563112' "10 MiB at MTU 9000: 1172 packets"
assert_jq "$T/d.json" '(.rows[0].goodput_gbit_per_s - 100 * 10485760 / 10563112 | fabs) < 1e-9' "goodput = link x efficiency"

# The write-up's figures: payload = MTU - 66 at MTUs of 10,000 and 64,000 bytes.
"$RB" fabric overhead --mtu 10000,64000 --mtu-includes-l2 --json >"$T/w.json"
assert_jq "$T/w.json" '.rows[0].packets == 1056 and .rows[0].header_bytes == 69696' "about 1,056 packets and 70 KB of headers"
assert_jq "$T/w.json" '.rows[1].packets == 165' "about 165 packets at 64K"

# Header stack without TCP timestamps: 9000 - 40 = 8960 a packet, 54 header bytes.
"$RB" fabric overhead --l3-headers ipv4=20,tcp=20 --mtu 9000,65536 --size 10MiB,1MiB --json >"$T/s.json"
assert_jq "$T/s.json" '.rows | length == 4' "sizes x MTUs rows"
assert_jq "$T/s.json" '.rows[0].packets == 1171 and .rows[0].header_bytes == 1171 * 54' "no timestamps: 1171 packets"
assert_jq "$T/s.json" '.rows[3].object_bytes == 1048576 and .rows[3].packets == 17' "1 MiB at 64 KiB: 17 packets"

"$RB" fabric overhead >"$T/table.txt"
grep -q '^| 10 MiB | 9000 | 8948 | 1172 | 77352 | 10563112 | 99.268 % |' "$T/table.txt" || fail "table row"
ok "table row"
"$RB" fabric overhead --out "$T/run" --quiet >/dev/null
assert_jq "$T/run/result.json" '.command == "fabric overhead" and .summary.rows[0].packets == 1172' "--out result.json"

assert_exit 2 "MTU below the headers" "$RB" fabric overhead --mtu 40
assert_stderr_line 'railbench: error: --mtu: 40 leaves no payload'
assert_exit 2 "MTU past any link" "$RB" fabric overhead --mtu 99999999999
assert_stderr_line "railbench: error: --mtu 99999999999: expected 68 to 65536 bytes"
assert_exit 2 "bad header stack" "$RB" fabric overhead --l3-headers tcp
assert_stderr_line 'railbench: error: --l3-headers: "tcp" is not name=bytes'
assert_exit 2 "empty object" "$RB" fabric overhead --size 0
assert_stderr_line 'railbench: error: --size'
assert_exit 2 "bad link rate" "$RB" fabric overhead --link-rate 0
assert_stderr_line 'railbench: error: --link-rate'
