#include "textflag.h"

// func quantRowsAsm(bs *uint64, words, n int, qw *uint64, est *uint16, hist *int32)
// For each of the n rows (words uint64 at bs each): x = row word XOR the
// query's sign word; for each bit plane p of the word (qw: sign, p0, p1,
// p2 per word), ANDN gives the agreeing bits of the plane (^x & p), POPCNT
// counts them, weighted 1, 2 and 4. est[i] = 1 + the sum; hist[est[i]]++.
// words and n are at least 1.
TEXT ·quantRowsAsm(SB), NOSPLIT, $0-48
	MOVQ bs+0(FP), SI
	MOVQ words+8(FP), R11
	MOVQ n+16(FP), CX
	MOVQ qw+24(FP), R12
	MOVQ est+32(FP), DI
	MOVQ hist+40(FP), R13
	SHLQ $5, R11
	ADDQ R12, R11 // the end of the query's words

row:
	MOVQ $1, R8
	MOVQ R12, DX

word:
	MOVQ    (SI), AX
	XORQ    (DX), AX
	ANDNQ   8(DX), AX, BX
	POPCNTQ BX, BX
	ANDNQ   16(DX), AX, R9
	POPCNTQ R9, R9
	ANDNQ   24(DX), AX, R10
	POPCNTQ R10, R10
	LEAQ    (BX)(R9*2), BX
	LEAQ    (BX)(R10*4), BX
	ADDQ    BX, R8
	ADDQ    $8, SI
	ADDQ    $32, DX
	CMPQ    DX, R11
	JNE     word

	MOVW R8, (DI)
	INCL (R13)(R8*4)
	ADDQ $2, DI
	DECQ CX
	JNZ  row
	RET
