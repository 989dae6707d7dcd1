//go:build linux && amd64

#include "go_asm.h"
#include "textflag.h"

// The reaper of reaper_linux_amd64.go, in the child of a clone with
// CLONE_VM: it shares the server's memory, so it runs no Go code and uses
// registers only (R12 holds its reaperData), never the stack.

#define SYS_rt_sigaction	13
#define SYS_wait4		61
#define SYS_kill		62
#define SYS_setresuid		117
#define SYS_setresgid		119
#define SYS_setgroups		116
#define SYS_capset		126
#define SYS_rt_sigtimedwait	128
#define SYS_prctl		157
#define SYS_exit_group		231
#define SYS_close_range		436

#define PR_SET_PDEATHSIG	1
#define PR_SET_DUMPABLE		4
#define SIGKILL			9
#define SIGCHLD			17
#define EINTR			4
#define WNOHANG_WALL		0x40000001

// func cloneReaper(nr, a1, a2, a3 uintptr, d *reaperData) (r1, errno uintptr)
TEXT ·cloneReaper(SB),NOSPLIT,$0-56
	MOVQ	d+32(FP), R12
	MOVQ	nr+0(FP), AX
	MOVQ	a1+8(FP), DI
	MOVQ	a2+16(FP), SI
	MOVQ	a3+24(FP), DX
	XORQ	R10, R10
	XORQ	R8, R8
	SYSCALL
	TESTQ	AX, AX
	JEQ	reaper
	CMPQ	AX, $0xfffffffffffff001
	JLS	ok
	NEGQ	AX
	MOVQ	$-1, r1+40(FP)
	MOVQ	AX, errno+48(FP)
	RET
ok:
	MOVQ	AX, r1+40(FP)
	MOVQ	$0, errno+48(FP)
	RET

reaper:
	// Every signal stays blocked (the parent blocked them all across the
	// clone): the default handlers, never the Go runtime's, for all 64.
	MOVQ	$1, BX
dfl:
	MOVQ	$SYS_rt_sigaction, AX
	MOVQ	BX, DI
	LEAQ	reaperData_dfl(R12), SI
	XORQ	DX, DX
	MOVQ	$8, R10
	SYSCALL
	INCQ	BX
	CMPQ	BX, $64
	JLS	dfl

	MOVL	reaperData_drop(R12), AX
	TESTL	AX, AX
	JEQ	undumpable
	// The host is root: the real user nobody, so that the command may
	// signal it, the effective and saved ones root, so that no process of
	// nobody may trace it (see reaper_linux_amd64.go).
	MOVQ	$SYS_setgroups, AX
	XORQ	DI, DI
	XORQ	SI, SI
	SYSCALL
	MOVQ	$SYS_setresgid, AX
	MOVQ	$const_nobody, DI
	MOVQ	DI, SI
	MOVQ	DI, DX
	SYSCALL
	MOVQ	$SYS_setresuid, AX
	MOVQ	$const_nobody, DI
	XORQ	SI, SI
	XORQ	DX, DX
	SYSCALL
	TESTQ	AX, AX
	JNE	die

undumpable:
	// A change of group made the memory dumpable if fs.suid_dumpable
	// says so: not any more.
	MOVQ	$SYS_prctl, AX
	MOVQ	$PR_SET_DUMPABLE, DI
	XORQ	SI, SI
	XORQ	DX, DX
	XORQ	R10, R10
	XORQ	R8, R8
	SYSCALL
	TESTQ	AX, AX
	JNE	die
	// No capability left.
	MOVQ	$SYS_capset, AX
	LEAQ	reaperData_capHdr(R12), DI
	LEAQ	reaperData_capNone(R12), SI
	SYSCALL
	TESTQ	AX, AX
	JNE	die
	// It dies with the server's thread; set after the changes of user,
	// which clear it.
	MOVQ	$SYS_prctl, AX
	MOVQ	$PR_SET_PDEATHSIG, DI
	MOVQ	$SIGKILL, SI
	XORQ	DX, DX
	SYSCALL
	// Last: closing every descriptor closes the ready pipe's write end,
	// which tells the server the reaper is set up (see forkReaper).
	MOVQ	$SYS_close_range, AX
	XORQ	DI, DI
	MOVL	$0xffffffff, SI
	XORQ	DX, DX
	SYSCALL

loop:
	// Every zombie the namespace handed over.
	MOVQ	$SYS_wait4, AX
	MOVQ	$-1, DI
	XORQ	SI, SI
	MOVQ	$WNOHANG_WALL, DX
	XORQ	R10, R10
	SYSCALL
	CMPQ	AX, $-EINTR
	JEQ	loop
	TESTQ	AX, AX
	JGT	loop
	// The next signal; any but SIGCHLD (kill 1 from inside) is passed on
	// to pid 2, the command.
	MOVQ	$SYS_rt_sigtimedwait, AX
	LEAQ	reaperData_all(R12), DI
	XORQ	SI, SI
	XORQ	DX, DX
	MOVQ	$8, R10
	SYSCALL
	CMPQ	AX, $SIGCHLD
	JEQ	loop
	TESTQ	AX, AX
	JLE	loop
	MOVQ	AX, SI
	MOVQ	$SYS_kill, AX
	MOVQ	$2, DI
	SYSCALL
	JMP	loop

die:
	MOVQ	$SYS_exit_group, AX
	MOVQ	$126, DI
	SYSCALL
	JMP	die
