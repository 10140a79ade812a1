//go:build amd64 && !purego

#include "textflag.h"

// Field multiply and square mod p = 2^256 - 0x1000003d1, for CPUs with BMI2
// and ADX. Same algorithm as mulGeneric/sqrGeneric in field.go: a 512-bit
// product in R8..R14, BX (t0..t7), then two folds of the high half by
// 0x1000003d1. MULX leaves the flags alone, so each row runs one carry
// chain on CF (ADCX, high halves) and one on OF (ADOX, low halves).
// MOVQ $0 also leaves the flags alone and supplies the zero that ends a chain.

// MULROW adds DX*y (y at 0..24(DI)) into t_i..t_{i+3}; t4 receives the top.
#define MULROW(t0, t1, t2, t3, t4) \
	XORQ  AX, AX     \
	MULXQ 0(DI), AX, CX  \
	ADOXQ AX, t0     \
	ADCXQ CX, t1     \
	MULXQ 8(DI), AX, CX  \
	ADOXQ AX, t1     \
	ADCXQ CX, t2     \
	MULXQ 16(DI), AX, CX \
	ADOXQ AX, t2     \
	ADCXQ CX, t3     \
	MULXQ 24(DI), AX, t4 \
	ADOXQ AX, t3     \
	MOVQ  $0, AX     \
	ADCXQ AX, t4     \
	ADOXQ AX, t4

// REDUCE folds t4..t7 (R12, R13, R14, BX) into t0..t3 (R8..R11) and stores
// the weakly reduced result at (DI).
#define REDUCE \
	MOVQ    $0x1000003d1, DX \
	XORQ    AX, AX      \
	MULXQ   R12, AX, CX \
	ADOXQ   AX, R8      \
	ADCXQ   CX, R9      \
	MULXQ   R13, AX, CX \
	ADOXQ   AX, R9      \
	ADCXQ   CX, R10     \
	MULXQ   R14, AX, CX \
	ADOXQ   AX, R10     \
	ADCXQ   CX, R11     \
	MULXQ   BX, AX, R12 \
	ADOXQ   AX, R11     \
	MOVQ    $0, AX      \
	ADCXQ   AX, R12     \
	ADOXQ   AX, R12     \
	MULXQ   R12, AX, CX \
	ADDQ    AX, R8      \
	ADCQ    CX, R9      \
	ADCQ    $0, R10     \
	ADCQ    $0, R11     \
	MOVQ    $0, AX      \
	CMOVQCS DX, AX      \
	ADDQ    AX, R8      \
	ADCQ    $0, R9      \
	MOVQ    R8, 0(DI)   \
	MOVQ    R9, 8(DI)   \
	MOVQ    R10, 16(DI) \
	MOVQ    R11, 24(DI)

// func mulADX(z, x, y *fe)
TEXT ·mulADX(SB), NOSPLIT, $0-24
	MOVQ x+8(FP), SI
	MOVQ y+16(FP), DI

	// Row 0 starts the product: t0..t4 = x0*y.
	MOVQ  0(SI), DX
	XORQ  AX, AX
	MULXQ 0(DI), R8, R9
	MULXQ 8(DI), AX, R10
	ADCXQ AX, R9
	MULXQ 16(DI), AX, R11
	ADCXQ AX, R10
	MULXQ 24(DI), AX, R12
	ADCXQ AX, R11
	MOVQ  $0, AX
	ADCXQ AX, R12

	MOVQ 8(SI), DX
	MULROW(R9, R10, R11, R12, R13)
	MOVQ 16(SI), DX
	MULROW(R10, R11, R12, R13, R14)
	MOVQ 24(SI), DX
	MULROW(R11, R12, R13, R14, BX)

	MOVQ z+0(FP), DI
	REDUCE
	RET

// func sqrADX(z, x *fe)
TEXT ·sqrADX(SB), NOSPLIT, $0-16
	MOVQ x+8(FP), SI

	// Cross products x_i*x_j, i < j, into t1..t6.
	MOVQ  0(SI), DX
	XORQ  AX, AX
	MULXQ 8(SI), R9, R10
	MULXQ 16(SI), AX, R11
	ADCXQ AX, R10
	MULXQ 24(SI), AX, R12
	ADCXQ AX, R11
	MOVQ  $0, AX
	ADCXQ AX, R12

	MOVQ  8(SI), DX
	XORQ  AX, AX
	MULXQ 16(SI), AX, CX
	ADOXQ AX, R11
	ADCXQ CX, R12
	MULXQ 24(SI), AX, R13
	ADOXQ AX, R12
	MOVQ  $0, AX
	ADCXQ AX, R13
	ADOXQ AX, R13

	MOVQ  16(SI), DX
	MULXQ 24(SI), AX, R14
	ADDQ  AX, R13
	ADCQ  $0, R14

	// Double them (CF chain) while adding the squares x_i^2 (OF chain).
	XORQ  BX, BX
	MOVQ  0(SI), DX
	MULXQ DX, R8, AX
	ADCXQ R9, R9
	ADOXQ AX, R9
	MOVQ  8(SI), DX
	MULXQ DX, AX, CX
	ADCXQ R10, R10
	ADOXQ AX, R10
	ADCXQ R11, R11
	ADOXQ CX, R11
	MOVQ  16(SI), DX
	MULXQ DX, AX, CX
	ADCXQ R12, R12
	ADOXQ AX, R12
	ADCXQ R13, R13
	ADOXQ CX, R13
	MOVQ  24(SI), DX
	MULXQ DX, AX, CX
	ADCXQ R14, R14
	ADOXQ AX, R14
	ADCXQ BX, BX
	ADOXQ CX, BX

	MOVQ z+0(FP), DI
	REDUCE
	RET
