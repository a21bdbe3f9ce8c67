; XDP_DROP for every frame.
mov64 r0, 1
exit
