// Per-instance state shared by the Go side and the C hooks. The C hooks
// run inside uc_emu_start on every instruction, so they do the cheap work
// (register reads, budget, bookkeeping) without leaving C, and cross into
// Go once per instruction only when a step callback is set.
#ifndef SFCONFORM_EMU_HOOK_H
#define SFCONFORM_EMU_HOOK_H

#include <stdint.h>
#include <unicorn/unicorn.h>

#define EMU_MAXREGS 64

enum {
	EMU_STOP_NONE = 0,
	EMU_STOP_BUDGET = 1,   // the next instruction would exceed the budget
	EMU_STOP_CALLBACK = 2, // the Go step callback returned an error
	EMU_STOP_INTR = 3,     // an interrupt or exception was raised
	EMU_STOP_MEM = 4,      // an unmapped or protected access
	EMU_STOP_INVALID = 5,  // an undecodable instruction
	EMU_STOP_SIGNAL = 6,   // a signal is due before the instruction at pc
	EMU_STOP_EXTERN = 7,   // lenient: an instruction fetched outside the image, at fault_addr
	EMU_STOP_MAP = 8,      // lenient: an unmapped read or write at fault_addr, to map and retry
};

#define EMU_MAXINSIDE 8
#define EMU_MAXPAGES 1024
#define EMU_PAGE 4096

// intno of a syscall or sysenter instruction: above any real vector.
#define EMU_INTNO_SYSCALL 0x10000

typedef struct emu_state {
	uc_engine *uc;
	int slot;    // the Machine's index in the Go slot table
	int deliver; // call the Go step callback at every instruction
	int pc_reg;  // Unicorn id of the PC

	int nregs; // registers read at every instruction; ids[0] is the SP
	int ids[EMU_MAXREGS];
	void *ptrs[EMU_MAXREGS];
	uint64_t vals[EMU_MAXREGS];

	uint64_t pc;     // the instruction about to execute
	uint64_t steps;  // instructions started (hooked) in this run
	uint64_t budget; // instructions allowed in this run
	uint64_t min_sp; // lowest SP seen in this run

	// A signal is due before the instruction at sig_pc executes for the
	// sig_count-th time; sig_count 0: none (one test per instruction).
	uint64_t sig_pc;
	uint64_t sig_count;

	int stop;            // EMU_STOP_*: why the run ended early
	int mem_type;        // uc_mem_type of a faulting access
	uint64_t fault_addr; // its address, or the PC of an invalid instruction
	int fault_size;
	uint32_t intno;

	// Lenient runs (Run.Lenient): fetching outside the inside ranges
	// stops with EMU_STOP_EXTERN; an unmapped read or write maps the page,
	// filled from fill, up to max_pages pages, recorded in pages.
	int lenient;
	int ninside;
	uint64_t inside_lo[EMU_MAXINSIDE], inside_hi[EMU_MAXINSIDE];
	uint64_t fill;
	int big_endian;
	int max_pages, npages;
	uint64_t pages[EMU_MAXPAGES];
	uint8_t page_buf[EMU_PAGE];

	// skip: the code hook lets the instruction at skip_pc pass once
	// uncounted, the one retried after its page was mapped (it was
	// counted and judged when it first started).
	int skip;
	uint64_t skip_pc;

	int x86; // hook syscall and sysenter too
	uc_hook code_hook, mem_hook, intr_hook, insn_hook, syscall_hook, sysenter_hook;
} emu_state;

uc_err emu_init(emu_state *s, uc_engine *uc);
void emu_set_regs(emu_state *s, const int *ids, int n);
uc_err emu_add_hooks(emu_state *s);
uc_err emu_run(emu_state *s, uint64_t begin, uint64_t until);
uc_err emu_invalidate(uc_engine *uc, uint64_t begin, uint64_t end);
uc_err emu_flush(uc_engine *uc);
uc_err emu_cp_or(uc_engine *uc, uint32_t op0, uint32_t op1, uint32_t crn, uint32_t crm, uint32_t op2, uint64_t bits, uint64_t *out);
uc_err emu_write_regs(uc_engine *uc, const int *ids, const uint64_t *vals, int n);
uc_err emu_read_regs(uc_engine *uc, const int *ids, uint64_t *vals, int n);
unsigned int emu_version(void);
uc_err emu_set_tcg_buffer(uc_engine *uc, uint32_t size);
void emu_fill_page(emu_state *s, uint64_t page);
bool emu_map_pages(emu_state *s, uint64_t addr, int size);

#endif
