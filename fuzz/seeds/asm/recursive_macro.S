.macro r n
.if \n > 0
 r \n - 1
.endif
.endm
.text
 r 4
 halt
