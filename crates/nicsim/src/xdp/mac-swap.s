; Send each frame back out of the adapter it came in by (XDP_TX), its
; destination and source Ethernet addresses swapped; pass anything shorter
; than an Ethernet header.
ldxdw r2, [r1+0]        ; data
ldxdw r3, [r1+8]        ; data_end
mov64 r4, r2
add64 r4, 14
jgt r4, r3, pass
ldxw r5, [r2+0]         ; destination
ldxh r6, [r2+4]
ldxw r7, [r2+6]         ; source
ldxh r8, [r2+10]
stxw [r2+0], r7
stxh [r2+4], r8
stxw [r2+6], r5
stxh [r2+10], r6
mov64 r0, 3             ; XDP_TX
exit
pass:
mov64 r0, 2             ; XDP_PASS
exit
