#!/usr/bin/env bash
# Measure nicsim's link flood beside the peer baselines (ns-3, SimPy) in one run and
# print nicsim's figure as a ratio to each. The machine is noisy: compare ratios.
#
#   bench/compare-peers.sh [PEERS_DIR] [PEERS_VENV]
#
# PEERS_DIR defaults to ../shared/peers; PEERS_VENV (default /tmp/peers) is created
# with `pip install ns3 simpy` when missing. nicsim must be installed in .venv.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
peers=${1:-$here/../shared/peers}
venv=${2:-/tmp/peers}
nicsim=${NICSIM:-$here/.venv/bin/nicsim}
[ -x "$nicsim" ] || { echo "nicsim not installed at $nicsim (run the README's set-up first)" >&2; exit 2; }
[ -f "$peers/ns3_p2p.py" ] || { echo "no peer scripts in $peers" >&2; exit 2; }
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv" && "$venv/bin/pip" install -q ns3 simpy
fi

echo "== nicsim: 1,000,000 x 64 B frames, one 10 Gb/s link =="
nic=$("$nicsim" bench --frames 1000000 --repeat 3 --json)
echo "$nic"
nic_fps=$(printf '%s' "$nic" | python3 -c 'import json,sys; print(json.load(sys.stdin)["frames_per_second"])')

echo "== ns-3: UDP flood, 10 Gb/s point-to-point, 5 ms simulated =="
ns3=$("$venv/bin/python" "$peers/ns3_p2p.py" 18 10Gbps 0.005 2>/dev/null | tail -n 1)
echo "$ns3"
ns3_fps=$(printf '%s' "$ns3" | sed -n 's/.*pkts_per_wall_s=\([0-9]*\).*/\1/p')

echo "== SimPy: source -> 10 GbE link -> sink, 200,000 frames =="
simpy=$("$venv/bin/python" "$peers/simpy_link.py" 200000 | tail -n 1)
echo "$simpy"
simpy_fps=$(printf '%s' "$simpy" | sed -n 's/.*frames_per_wall_s=\([0-9]*\).*/\1/p')

python3 - "$nic_fps" "$ns3_fps" "$simpy_fps" <<'PY'
import sys
nic, ns3, simpy = map(float, sys.argv[1:])
print(f"\nsimulated frames per wall second: nicsim {nic/1e6:.2f} M, ns-3 {ns3/1e6:.3f} M, SimPy {simpy/1e6:.3f} M")
print(f"nicsim / ns-3  = {nic/ns3:.1f}x")
print(f"nicsim / SimPy = {nic/simpy:.1f}x")
PY
