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


// func quantRowsAVX512(bs *uint64, words, n int, qv *uint64, est *uint16, hist *int32, maskA, maskB uint64)
// quantRowsAsm for rows of 1 to 16 words, eight words a step: qv holds
// the query's sign words, then its three planes, 16 words each (zero
// past words). Per row: x = the row XOR the signs, for each plane
// VPANDNQ (^x & p) and VPOPCNTQ, the planes weighted 1, 2 and 4, the 8
// lanes summed. maskA and maskB mask the row's words 0-7 and 8-15 (K1,
// K2): a masked load reads nothing past the row.
TEXT ·quantRowsAVX512(SB), NOSPLIT, $0-64
	MOVQ  bs+0(FP), SI
	MOVQ  words+8(FP), R11
	MOVQ  n+16(FP), CX
	MOVQ  qv+24(FP), R12
	MOVQ  est+32(FP), DI
	MOVQ  hist+40(FP), R13
	MOVQ  maskA+48(FP), AX
	KMOVW AX, K1
	MOVQ  maskB+56(FP), AX
	KMOVW AX, K2
	SHLQ  $3, R11 // the row's bytes

	VMOVDQU64 0(R12), Z16   // signs, words 0-7
	VMOVDQU64 64(R12), Z20  // words 8-15
	VMOVDQU64 128(R12), Z17 // plane 0
	VMOVDQU64 192(R12), Z21
	VMOVDQU64 256(R12), Z18 // plane 1
	VMOVDQU64 320(R12), Z22
	VMOVDQU64 384(R12), Z19 // plane 2
	VMOVDQU64 448(R12), Z23

row:
	VMOVDQU64.Z (SI), K1, Z0
	VMOVDQU64.Z 64(SI), K2, Z4
	VPXORQ      Z16, Z0, Z0
	VPXORQ      Z20, Z4, Z4
	VPANDNQ     Z17, Z0, Z1
	VPANDNQ     Z21, Z4, Z5
	VPANDNQ     Z18, Z0, Z2
	VPANDNQ     Z22, Z4, Z6
	VPANDNQ     Z19, Z0, Z3
	VPANDNQ     Z23, Z4, Z7
	VPOPCNTQ    Z1, Z1
	VPOPCNTQ    Z5, Z5
	VPOPCNTQ    Z2, Z2
	VPOPCNTQ    Z6, Z6
	VPOPCNTQ    Z3, Z3
	VPOPCNTQ    Z7, Z7
	VPADDQ      Z5, Z1, Z1
	VPADDQ      Z6, Z2, Z2
	VPADDQ      Z7, Z3, Z3
	VPSLLQ      $1, Z2, Z2
	VPSLLQ      $2, Z3, Z3
	VPADDQ      Z2, Z1, Z1
	VPADDQ      Z3, Z1, Z1
	VEXTRACTI64X4 $1, Z1, Y2
	VPADDQ      Y2, Y1, Y1
	VEXTRACTI128 $1, Y1, X2
	VPADDQ      X2, X1, X1
	VPSHUFD     $0x4e, X1, X2
	VPADDQ      X2, X1, X1
	VMOVQ       X1, AX
	INCQ        AX

	MOVW AX, (DI)
	INCL (R13)(AX*4)
	ADDQ $2, DI
	ADDQ R11, SI
	DECQ CX
	JNZ  row
	VZEROUPPER
	RET
