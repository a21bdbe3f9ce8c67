"""Random combinations of the mechanisms a host and its adapters can have,
drawn over the shipped scenarios, for the invariant tests."""

import random
import re

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

from conftest import SCENARIOS

# Scenarios whose runs need no real network (the bridge's need namespaces).
FILES = sorted(p for p in SCENARIOS.rglob("*.toml") if p.name != "study.toml" and "bridge" not in p.parts)

HOST = {
    "driver.mode": ["handler", "napi", "poll", "os-poll"],
    "driver.gro": [True, False],
    "driver.budget": [1, 8, 64],
    "driver.buffers": ["recycle", "reallocate"],
    "driver.refill_batch": [1, 8],
    "driver.tx_tail_batch": [1, 32],
    "driver.deferred": ["interrupted", "any"],
    "driver.handler": ["interrupt", "dpc"],
    "driver.copy": [True, False],
    "cpus": [1, 2, 4],
    "zero_copy": [True, False],
    "serialized_stack": [True, False],
    "background": [{"processes": 2, "slice": "1ms"}],
    "costs.poll": [0, 100],
    "costs.gro_segment": [0, 200],
    "costs.alloc_stall": ["0s", "2us"],
    "costs.media_frame": [0, 500],
    "costs.copy_ns_per_byte": [0.0, 0.5],
    "bus": [
        {"kind": "pcie", "generation": 1, "lanes": 1},
        {"kind": "pci-x", "clock": "66MHz", "width": 64},
        {"kind": "pci", "clock": "33MHz", "width": 32, "mwi": False},
    ],
}
# Settings that come with another: a policy and its parameters.
RING = {
    "interrupt": [
        {"interrupt": "per-frame"},
        {"interrupt": "min-interval", "interrupt_interval": "20us"},
        {"interrupt": "coalesce", "coalesce_frames": 8, "coalesce_time": "50us"},
        {"interrupt": "backup", "backup_timeout": "200us"},
    ],
    "intelligent": [{"intelligent": True, "processor_clock": "100MHz", "processor_frame_cycles": 500}, {"intelligent": False}],
    "tso": [True, False],
    "transfer": ["bus-master", "pio", "shared-memory", "system-dma"],
    "rx_ring": [8, 64, 256],
    "tx_ring": [8, 256],
    "rx_writeback": [1, 4, 60, 250, 496],  # and near the ring's size (a group of 496 in 512 once stopped receive)
    "tx_writeback": [1, 4],
    "strip_crc": [True, False],
    "rx_fifo": [4096, 49152],
    "rx_writeback_delay": ["2us"],
    "irq_cpu": [0, 1],
    "count": [1, 2],
}
TOE = {
    "clock": ["50MHz", "100MHz", "400MHz"],
    "queue_depth": [1, 4, 32],
    "inline_max": [0, 512, 4096],
}
PROGRAMMABLE = {
    "segmentation": ["direct", "store-and-forward"],
    "checksum": ["mac", "firmware", "split"],
    "rx_buffers": [1, 64],
    "repost_batch": [1, 8],
    "receive": [{"coalesce_frames": 8}, {"lro_timeout": "20us"}, {"gro_timeout": "20us"}, {"to_host": False}],
}


def draw(rng: random.Random):
    """A scenario file and overrides: a short run from time zero, its hosts'
    (some of them) drivers, processors, buses and adapters changed at random."""
    path = rng.choice(FILES)
    sc = tomllib.loads(path.read_text())
    hosts = sc.get("host", [])
    sets = {"duration": rng.choice(["2ms", "5ms", "20ms"]), "seed": rng.randint(1, 99)}
    sets.update({f"host[{i}].warmup": "0s" for i in range(len(hosts))})
    modelled = [i for i, h in enumerate(hosts) if not h.get("ideal")]
    for i in rng.sample(modelled, rng.randint(min(1, len(modelled)), len(modelled))):
        at = f"host[{i}]"
        for key, values in rng.sample(sorted(HOST.items()), rng.randint(1, 5)):
            sets[f"{at}.{key}"] = rng.choice(values)
        if hosts[i].get("ttcp", {}).get("role") == "send" and rng.random() < 0.5:
            # A sender starting with the run, before a listener could be opened
            # through an adapter (a start of 0 once stalled an offload receiver).
            sets[f"{at}.ttcp.start"] = rng.choice(["0ms", "1us", "10us"])
        for a, adapter in enumerate(hosts[i].get("adapter", [])):
            kind = adapter.get("kind", "ring")
            table = {"ring": RING, "programmable": PROGRAMMABLE, "toe": TOE}[kind]
            prefix = f"{at}.adapter[{a}]" + ("" if kind == "ring" else f".{kind}")
            for key, values in rng.sample(sorted(table.items()), rng.randint(0, min(4, len(table)))):
                value = rng.choice(values)
                if kind == "ring" and isinstance(value, dict):
                    sets.update({f"{prefix}.{k}": v for k, v in value.items()})
                else:
                    sets[f"{prefix}.{key}"] = value
    for i, _ in enumerate(sc.get("link", [])):
        if rng.random() < 0.3:
            sets[f"link[{i}].rate"] = rng.choice(["100Mbps", "1Gbps", "10Gbps"])
        if rng.random() < 0.2:
            sets[f"link[{i}].propagation"] = "5us"
    for i, _ in enumerate(sc.get("switch", [])):
        if rng.random() < 0.3:
            sets[f"switch[{i}].queue_frames"] = rng.choice([4, 64])
    return path, sets


def endless(rng: random.Random):
    """A shipped scenario made endless: no `duration`, and two ports of a new
    switch cabled together (a forwarding loop) or a source whose count outlasts
    the simulator's clock. Returns the text without a duration, the text made
    endless and the word its refusal names."""
    path = rng.choice(FILES)
    base = text = re.sub(r"(?m)^duration\s*=.*$", "", path.read_text())
    if rng.random() < 0.5:
        text += '\n[[switch]]\nname = "fuzz-loop"\nports = 2\n\n[[link]]\nname = "fuzz-loop-cable"\na = "fuzz-loop:0"\nb = "fuzz-loop:1"\nrate = "1Gbps"\n'
        return base, text, "loop"
    count = rng.choice(["1_000_000_000_000_000_000", "100_000_000_000_000_000"])
    text += f'\n[[source]]\nname = "fuzz-flood"\nto = "fuzz-sink"\nframe_size = 1518\ncount = {count}\n\n[[sink]]\nname = "fuzz-sink"\n\n[[link]]\nname = "fuzz-flood-link"\na = "fuzz-flood"\nb = "fuzz-sink"\nrate = "100Gbps"\n'
    return base, text, "count"
