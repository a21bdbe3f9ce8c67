"""A progress bar for one long run: simulated time against the scenario's
duration, with the wall time so far and left (tqdm, as for sweeps)."""

from __future__ import annotations

import io
import os
import sys
from typing import Callable, Optional, Tuple

# A run shorter than this shows no bar at all.
SHOW_AFTER = 1.0


def screen(stream) -> dict:
    """tqdm's size settings for `stream`: follow its terminal, or 80 x 24 where
    that reports no size (a bare pseudo-terminal), on which tqdm would hide its bar."""
    try:
        size = os.get_terminal_size(stream.fileno())
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        size = os.terminal_size((0, 0))
    if size.columns and size.lines:
        return {"dynamic_ncols": True}
    return {"ncols": size.columns or 80, "nrows": size.lines or 24}


def run_bar(stream=sys.stderr) -> Tuple[Callable[[float, Optional[float], int, float], None], Callable[[], None]]:
    """(tell, close): `tell` takes `_core.run_file`'s progress calls (simulated
    seconds, duration or None, events, wall seconds); `close` clears the bar."""
    from tqdm import tqdm

    state = {}

    def tell(simulated: float, until: Optional[float], events: int, wall: float) -> None:
        bar = state.get("bar")
        if bar is None:
            if wall < SHOW_AFTER:
                return
            if until is None:
                fmt = "{desc}: {n:.3f} s [{elapsed}]"
            else:
                fmt = "{desc}: {percentage:3.0f}%|{bar}| {n:.3f} of {total:.3f} s [{elapsed}<{remaining}]"
            bar = state["bar"] = tqdm(
                total=until,
                desc="simulated",
                file=stream,
                leave=False,
                bar_format=fmt,
                # It is told every half second: each call shows, and the time left
                # follows the run's average pace.
                mininterval=0,
                smoothing=0,
                # Nothing shown before its clock is set back to the run's start.
                delay=1e-9,
                **screen(stream),
            )
            # Its clock starts with the run, so that its pace and time left are the run's.
            bar.start_t -= wall
        bar.update(simulated - bar.n)

    def close() -> None:
        bar = state.pop("bar", None)
        if bar is not None:
            bar.close()

    return tell, close
