#include "textflag.h"

// SIPROUND is one SipRound on eight independent states at once: v0..v3
// are Z0..Z3, each holding the same state word of eight hashes.
#define SIPROUND \
	VPADDQ Z1, Z0, Z0; \
	VPROLQ $13, Z1, Z1; \
	VPXORQ Z0, Z1, Z1; \
	VPROLQ $32, Z0, Z0; \
	VPADDQ Z3, Z2, Z2; \
	VPROLQ $16, Z3, Z3; \
	VPXORQ Z2, Z3, Z3; \
	VPADDQ Z3, Z0, Z0; \
	VPROLQ $21, Z3, Z3; \
	VPXORQ Z0, Z3, Z3; \
	VPADDQ Z1, Z2, Z2; \
	VPROLQ $17, Z1, Z1; \
	VPXORQ Z2, Z1, Z1; \
	VPROLQ $32, Z2, Z2

// func sip8AVX512(k0, k1 uint64, elems *[]byte, idx *[8]int, blocks int, out *[8]uint64)
TEXT ·sip8AVX512(SB), NOSPLIT, $0-48
	MOVQ k0+0(FP), AX
	MOVQ k1+8(FP), BX
	MOVQ elems+16(FP), SI
	MOVQ idx+24(FP), R8
	MOVQ blocks+32(FP), CX
	MOVQ out+40(FP), DI

	// Z7 = idx*24, the offsets of the elements' slice headers.
	VMOVDQU64 (R8), Z7
	VPSLLQ $3, Z7, Z6
	VPSLLQ $4, Z7, Z7
	VPADDQ Z6, Z7, Z7
	KXNORW K1, K1, K1
	VPGATHERQQ (SI)(Z7*1), K1, Z8   // data pointers
	KXNORW K2, K2, K2
	VPGATHERQQ 8(SI)(Z7*1), K2, Z9  // lengths

	MOVQ $0x736f6d6570736575, DX
	XORQ AX, DX
	VPBROADCASTQ DX, Z0
	MOVQ $0x646f72616e646f6d, DX
	XORQ BX, DX
	VPBROADCASTQ DX, Z1
	MOVQ $0x6c7967656e657261, DX
	XORQ AX, DX
	VPBROADCASTQ DX, Z2
	MOVQ $0x7465646279746573, DX
	XORQ BX, DX
	VPBROADCASTQ DX, Z3

	// The final block's word: the last 8 bytes of each element, shifted
	// right by 64-8*(len%8) bits (a shift of 64 leaves 0), with the length
	// in the top byte.
	MOVQ $8, DX
	VPBROADCASTQ DX, Z10
	VPSUBQ Z10, Z9, Z11
	VPADDQ Z8, Z11, Z11             // ptr+len-8
	KXNORW K3, K3, K3
	XORQ AX, AX
	VPGATHERQQ (AX)(Z11*1), K3, Z12
	MOVQ $7, DX
	VPBROADCASTQ DX, Z13
	VPANDQ Z13, Z9, Z13
	VPSLLQ $3, Z13, Z13
	MOVQ $64, DX
	VPBROADCASTQ DX, Z14
	VPSUBQ Z13, Z14, Z14
	VPSRLVQ Z14, Z12, Z12
	VPSLLQ $56, Z9, Z13
	VPORQ Z13, Z12, Z12             // the final block, in Z12

	DECQ CX
	JZ final
full:
	KXNORW K1, K1, K1
	VPGATHERQQ (AX)(Z8*1), K1, Z4
	VPADDQ Z10, Z8, Z8
	VPXORQ Z4, Z3, Z3
	SIPROUND
	SIPROUND
	VPXORQ Z4, Z0, Z0
	DECQ CX
	JNZ full
final:
	VPXORQ Z12, Z3, Z3
	SIPROUND
	SIPROUND
	VPXORQ Z12, Z0, Z0

	MOVQ $0xff, DX
	VPBROADCASTQ DX, Z5
	VPXORQ Z5, Z2, Z2
	SIPROUND
	SIPROUND
	SIPROUND
	SIPROUND
	VPXORQ Z1, Z0, Z0
	VPXORQ Z3, Z2, Z2
	VPXORQ Z2, Z0, Z0
	VMOVDQU64 Z0, (DI)
	VZEROUPPER
	RET
