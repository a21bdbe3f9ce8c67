; Every frame to the AF_XDP socket of its receive queue: bpf_redirect_map
; (helper 51) over map 0, the sockets by queue, with the queue it came in by
; (rx_queue_index, at 16 in the context), and XDP_PASS (2) where the map has
; no socket for it.
ldxw r2, [r1+16]
mov64 r1, 0
mov64 r3, 2
call 51
exit
