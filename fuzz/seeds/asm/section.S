.section .text.hot
.balign 16
.globl g
.type g, @function
g: ld32 $m4, [$m0+0]
 st64 $a0:1, [$m4+=8]
 jmp $m15
.size g, . - g
