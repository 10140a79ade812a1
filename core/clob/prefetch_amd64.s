//go:build amd64 && !purego

#include "textflag.h"

// func prefetch(p unsafe.Pointer, n uintptr)
TEXT ·prefetch(SB), NOSPLIT|NOFRAME, $0-16
	MOVQ p+0(FP), AX
	MOVQ n+8(FP), CX
	LEAQ -1(AX)(CX*1), CX // the last byte
	ANDQ $~63, AX
loop:
	PREFETCHT0 (AX)
	ADDQ $64, AX
	CMPQ AX, CX
	JLS  loop
	RET
