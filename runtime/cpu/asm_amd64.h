// Shared by the AVX-512 kernels of this package.

// TAIL16 splits an element count n in CX into 16-lane vectors: K1 = the
// lanes of the last n mod 16 elements, CX = n/16 full vectors. It uses AX
// and R13.
#define TAIL16 \
	MOVQ CX, R13; \
	ANDQ $15, CX; \
	MOVL $1, AX; \
	SHLL CX, AX; \
	DECL AX; \
	KMOVW AX, K1; \
	MOVQ R13, CX; \
	SHRQ $4, CX
