"""Pieces of scenario text that several tests build their scenarios from."""

# A modelled host's costs, small enough that its processors never limit a test.
CHEAP_COSTS = """[host.costs]
interrupt_entry = 100
interrupt_exit = 100
rx_frame = 100
protocol_segment = 100
tx_frame = 100
"""
