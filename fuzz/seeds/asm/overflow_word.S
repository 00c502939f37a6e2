.text
f: nop
.data
.word f + 0x100000000
