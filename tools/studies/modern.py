"""scenarios/modern/: a 40 GbE adapter on PCIe Gen3 x8, kernel and DPDK-like drivers,
achievable frame rate against frame size for transmit only, receive only and both."""

from pathlib import Path

import nicsim

DIR = Path(__file__).resolve().parents[2] / "scenarios" / "modern"
SIZES = [64, 128, 256, 512, 1024, 1518]
LINE_BPS = 40e9


def line_pps(size: int) -> float:
    return LINE_BPS / ((size + 20) * 8)


def measure(variant: str, size: int, direction: str) -> "tuple[float, float]":
    """Frames per second received by the host and sent by it (0 where not asked)."""
    sets = {"source[0].frame_size": size, "host[0].blast.frame_size": size}
    if direction == "tx":
        sets["source[0].count"] = 1
    if direction == "rx":
        sets["host[0].blast.count"] = 0
    r = nicsim.run(DIR / f"40g-{variant}.toml", overrides=sets)
    rx = r.metric("server", "sink_frame_rate_pps") if direction != "tx" else 0.0
    tx = r.metric("tester-rx", "frame_rate_pps") if direction != "rx" else 0.0
    return rx, tx


def section() -> str:
    out = [
        """## Modern: 40 GbE on PCIe Gen3 x8 (scenarios `modern/40g-kernel.toml`, `modern/40g-dpdk.toml`)

No publication: the whole table is a prediction from the PCIe accounting, the adapter's
descriptor behaviour (BRIEF.md's 82599 figures) and assumed per-frame processor costs
(docs/model.md). Rates are in millions of frames per second, with the share of the
40 GbE line rate in brackets. "Both" sends and receives at once over the one link.
"""
    ]
    for variant, what in [("kernel", "kernel driver: interrupts (50 µs moderation), NAPI, tail write per frame"), ("dpdk", "DPDK-like: polling, no interrupts, tail write per 32")]:
        out.append(f"### {what}\n")
        out.append("| frame (B) | line rate (Mpps) | transmit only | receive only | both: receive | both: transmit |")
        out.append("|---|---|---|---|---|---|")
        for size in SIZES:
            line = line_pps(size)
            _, tx = measure(variant, size, "tx")
            rx, _ = measure(variant, size, "rx")
            brx, btx = measure(variant, size, "both")
            cell = lambda v: f"{v / 1e6:.2f} ({100 * v / line:.0f}%)"  # noqa: E731
            out.append(f"| {size} | {line / 1e6:.2f} | {cell(tx)} | {cell(rx)} | {cell(brx)} | {cell(btx)} |")
        out.append("")
    return "\n".join(out)
