"""Pieces of scenario text that several tests build their scenarios from."""

# A modelled host's costs, small enough that its processors never limit a test.
CHEAP_COSTS = """[host.costs]
interrupt_entry = 100
interrupt_exit = 100
rx_frame = 100
protocol_segment = 100
tx_frame = 100
"""

# A modelled host's costs as the repository's Linux-like scenarios assume them
# (docs/model.md): a kernel path on a 2 GHz processor.
KERNEL_COSTS = """[host.costs]
interrupt_entry = 1000
interrupt_exit = 500
rx_frame = 300
protocol_segment = 700
tx_frame = 1000
app_request = 2000
"""
