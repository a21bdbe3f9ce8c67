; Every frame to host processor CPU, whose stack takes it from there:
; bpf_redirect_map (helper 51) over map 1, the host's processors (a CPU map),
; and XDP_PASS (2) where the map has no such processor.
mov64 r1, 1
mov64 r2, CPU
mov64 r3, 2
call 51
exit
