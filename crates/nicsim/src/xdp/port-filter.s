; Drop IPv4 TCP and UDP to destination port PORT (XDP_DROP); pass the rest.
ldxdw r2, [r1+0]        ; data
ldxdw r3, [r1+8]        ; data_end
mov64 r4, r2
add64 r4, 34            ; Ethernet and a minimal IPv4 header
jgt r4, r3, pass
ldxh r5, [r2+12]        ; EtherType, in network order
be16 r5
jne r5, 0x0800, pass
ldxb r6, [r2+23]        ; IPv4 protocol
jeq r6, 6, ports        ; TCP
jne r6, 17, pass        ; nor UDP
ports:
ldxb r7, [r2+14]        ; version and header length
and64 r7, 0x0f
lsh64 r7, 2
add64 r7, r2
add64 r7, 14            ; the transport header
mov64 r8, r7
add64 r8, 4
jgt r8, r3, pass
ldxh r9, [r7+2]         ; destination port
be16 r9
jne r9, PORT, pass
mov64 r0, 1             ; XDP_DROP
exit
pass:
mov64 r0, 2             ; XDP_PASS
exit
