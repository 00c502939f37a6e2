        .param N, 3
        .macro twice op
        \op
        \op
        .endm
        .define NOP2 nop
        .set K, N * 2 + 1
        .cycles "4 + K"
        .text
        .globl entry
entry:
        .rept N
        twice nop
        .endr
        .if K > 4
        NOP2
        .else
        .error "small K"
        .endif
        setzi $m1, 2
        rpt $m1, e
        nop
e:      halt
        .data
        .align 8
tab:    .word entry + 4, K
        .half 1, 2
        .byte 0xff
        .space 8
        .zero 4
