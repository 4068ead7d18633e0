package realcode

import (
	"fmt"

	"github.com/sfconform/sfconform/target"
)

// The freestanding runtime a Csmith program is linked with: no C library,
// nothing the emulator cannot run. _start (assembly, its return address
// column undefined: the outermost frame, as gen's entry stub) calls main,
// stores main's result in sfconform_result, the checksum sink, and jumps
// to sfconform_exit, where the run ends (the image's Exit: the emulator
// stops when the PC reaches it). printf is the only output Csmith's
// generic platform uses; it folds the checksum it is given into
// sfconform_result instead of printing. memcpy and friends are there for
// the calls gcc makes itself.

// runtimeC is the C part, compiled with the program's flags.
const runtimeC = `/* sfconform's freestanding runtime for Csmith programs. */
typedef unsigned long size_t;
volatile unsigned long sfconform_result;

int printf(const char *fmt, ...)
{
	/* Csmith's last printf is "checksum = %X\n" with the checksum: fold
	   the format's length in, so that the sink changes with what is
	   printed, without a C library. */
	unsigned long n = 0;
	while (fmt[n])
		n++;
	sfconform_result = sfconform_result * 31 + n;
	return (int)n;
}

void *memcpy(void *d, const void *s, size_t n)
{
	unsigned char *dp = d;
	const unsigned char *sp = s;
	while (n--)
		*dp++ = *sp++;
	return d;
}

void *memmove(void *d, const void *s, size_t n)
{
	unsigned char *dp = d;
	const unsigned char *sp = s;
	if (dp < sp) {
		while (n--)
			*dp++ = *sp++;
	} else {
		while (n--)
			dp[n] = sp[n];
	}
	return d;
}

void *memset(void *d, int c, size_t n)
{
	unsigned char *dp = d;
	while (n--)
		*dp++ = (unsigned char)c;
	return d;
}

int memcmp(const void *a, const void *b, size_t n)
{
	const unsigned char *x = a, *y = b;
	for (; n; n--, x++, y++)
		if (*x != *y)
			return *x < *y ? -1 : 1;
	return 0;
}

/* Csmith's safe float helpers call these at -O0. */
float fabsf(float x)
{
	union { float f; unsigned int u; } v = { x };
	v.u &= 0x7fffffffu;
	return v.f;
}

double fabs(double x)
{
	union { double f; unsigned long u; } v = { x };
	v.u &= 0x7fffffffffffffffUL;
	return v.f;
}

int strcmp(const char *a, const char *b)
{
	for (; *a == *b; a++, b++)
		if (!*a)
			return 0;
	return *(const unsigned char *)a < *(const unsigned char *)b ? -1 : 1;
}
`

// startAsm is _start and sfconform_exit for t.
func startAsm(t target.Target) (string, error) {
	var body, ra string
	switch t {
	case target.X86_64:
		ra = "%rip"
		body = `	xorl	%ebp, %ebp
	call	main
	movq	%rax, sfconform_result(%rip)
	jmp	sfconform_exit`
	case target.AArch64, target.AArch64BE:
		ra = "x30"
		body = `	mov	x29, #0
	bl	main
	adrp	x1, sfconform_result
	str	x0, [x1, :lo12:sfconform_result]
	b	sfconform_exit`
	case target.S390X:
		ra = "%r14"
		body = `	lghi	%r11, 0
	brasl	%r14, main
	larl	%r1, sfconform_result
	stg	%r2, 0(%r1)
	jg	sfconform_exit`
	default:
		return "", fmt.Errorf("no runtime for target %s", t.Name())
	}
	return fmt.Sprintf(`	.text
	.globl	_start
	.type	_start, @function
_start:
	.cfi_startproc
	.cfi_undefined %s
%s
	.cfi_endproc
	.size	_start, .-_start
	.globl	sfconform_exit
	.type	sfconform_exit, @function
sfconform_exit:
	.cfi_startproc
	.cfi_undefined %s
	nop
	.cfi_endproc
	.size	sfconform_exit, .-sfconform_exit
	.section	.note.GNU-stack,"",@progbits
`, ra, body, ra), nil
}
