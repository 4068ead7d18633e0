#include <string.h>
#include <unicorn/unicorn.h>
#include <unicorn/arm64.h>
#include "hook.h"
#include "_cgo_export.h"

static int emu_inside(const emu_state *s, uint64_t addr)
{
	int i;
	for (i = 0; i < s->ninside; i++)
		if (addr >= s->inside_lo[i] && addr < s->inside_hi[i])
			return 1;
	return 0;
}

// emu_fill_page writes the pattern of a page mapped on demand: each 8-byte
// word holds its own address XOR fill, in the target's byte order (fill 0:
// zeros).
void emu_fill_page(emu_state *s, uint64_t page)
{
	int i, k;
	for (i = 0; i < EMU_PAGE; i += 8) {
		uint64_t v = s->fill ? ((page + (uint64_t)i) ^ s->fill) : 0;
		for (k = 0; k < 8; k++) {
			int shift = s->big_endian ? 8 * (7 - k) : 8 * k;
			s->page_buf[i + k] = (uint8_t)(v >> shift);
		}
	}
	uc_mem_write(s->uc, page, s->page_buf, EMU_PAGE);
}

// emu_map_pages maps the pages [addr, addr+size) touches that are not
// mapped yet; false when the page budget is spent or a page cannot be
// mapped.
bool emu_map_pages(emu_state *s, uint64_t addr, int size)
{
	uint64_t p, lo = addr & ~(uint64_t)(EMU_PAGE - 1);
	uint64_t hi = (addr + (uint64_t)(size > 0 ? size : 1) + EMU_PAGE - 1) & ~(uint64_t)(EMU_PAGE - 1);
	if (hi <= lo)
		return false; // wraps around the address space
	for (p = lo; p < hi; p += EMU_PAGE) {
		uc_err err;
		if (s->npages >= s->max_pages || s->npages >= EMU_MAXPAGES)
			return false;
		err = uc_mem_map(s->uc, p, EMU_PAGE, UC_PROT_READ | UC_PROT_WRITE);
		if (err == UC_ERR_MAP)
			continue; // the other page of a straddling access
		if (err != UC_ERR_OK)
			return false;
		s->pages[s->npages++] = p;
		emu_fill_page(s, p);
	}
	return true;
}

static void emu_on_code(uc_engine *uc, uint64_t addr, uint32_t size, void *user)
{
	emu_state *s = user;
	(void)size;
	s->pc = addr;
	if (s->skip) {
		s->skip = 0;
		if (addr == s->skip_pc)
			return;
	}
	if (s->sig_count && addr == s->sig_pc && --s->sig_count == 0) {
		// Before the instruction: it is not counted, and runs again
		// once the handler has returned.
		s->stop = EMU_STOP_SIGNAL;
		uc_emu_stop(uc);
		return;
	}
	if (s->lenient && !emu_inside(s, addr)) {
		// Not counted, not delivered: the Go side returns to the
		// caller and resumes.
		s->stop = EMU_STOP_EXTERN;
		s->fault_addr = addr;
		uc_emu_stop(uc);
		return;
	}
	if (s->steps >= s->budget) {
		s->stop = EMU_STOP_BUDGET;
		uc_emu_stop(uc);
		return;
	}
	uc_reg_read_batch(uc, s->ids, s->ptrs, s->nregs);
	if (s->vals[0] < s->min_sp)
		s->min_sp = s->vals[0];
	if (s->deliver && emuStep(s->slot) != 0) {
		s->stop = EMU_STOP_CALLBACK;
		uc_emu_stop(uc);
		return;
	}
	s->steps++;
}

static bool emu_on_mem_invalid(uc_engine *uc, uc_mem_type type, uint64_t addr, int size, int64_t value, void *user)
{
	emu_state *s = user;
	(void)uc;
	(void)value;
	if (s->lenient && s->stop == EMU_STOP_NONE) {
		if ((type == UC_MEM_READ_UNMAPPED || type == UC_MEM_WRITE_UNMAPPED) &&
		    s->npages < s->max_pages && s->npages < EMU_MAXPAGES) {
			// Mapped outside the emulation, then retried
			// (EMU_STOP_MAP): Unicorn 2.1 may free its TLB when
			// memory is mapped inside this hook and then read
			// the freed table (a SIGSEGV now and then).
			s->stop = EMU_STOP_MAP;
			s->mem_type = type;
			s->fault_addr = addr;
			s->fault_size = size;
			return false;
		}
		if (type == UC_MEM_FETCH_UNMAPPED || type == UC_MEM_FETCH_PROT) {
			s->stop = EMU_STOP_EXTERN;
			s->fault_addr = addr;
			return false;
		}
	}
	if (s->stop == EMU_STOP_NONE) {
		s->stop = EMU_STOP_MEM;
		s->mem_type = type;
		s->fault_addr = addr;
		s->fault_size = size;
	}
	return false;
}

static void emu_on_intr(uc_engine *uc, uint32_t intno, void *user)
{
	emu_state *s = user;
	if (s->stop == EMU_STOP_NONE) {
		uint64_t pc = 0;
		uc_reg_read(uc, s->pc_reg, &pc);
		s->stop = EMU_STOP_INTR;
		s->intno = intno;
		s->fault_addr = pc;
	}
	uc_emu_stop(uc);
}

static void emu_on_syscall(uc_engine *uc, void *user)
{
	emu_state *s = user;
	if (s->stop == EMU_STOP_NONE) {
		s->stop = EMU_STOP_INTR;
		s->intno = EMU_INTNO_SYSCALL;
		s->fault_addr = s->pc;
	}
	uc_emu_stop(uc);
}

static bool emu_on_insn_invalid(uc_engine *uc, void *user)
{
	emu_state *s = user;
	if (s->stop == EMU_STOP_NONE) {
		uint64_t pc = 0;
		uc_reg_read(uc, s->pc_reg, &pc);
		s->stop = EMU_STOP_INVALID;
		s->fault_addr = pc;
	}
	return false;
}

uc_err emu_init(emu_state *s, uc_engine *uc)
{
	memset(s, 0, sizeof *s);
	s->uc = uc;
	return UC_ERR_OK;
}

void emu_set_regs(emu_state *s, const int *ids, int n)
{
	int i;
	if (n > EMU_MAXREGS)
		n = EMU_MAXREGS;
	for (i = 0; i < n; i++) {
		s->ids[i] = ids[i];
		s->ptrs[i] = &s->vals[i];
		s->vals[i] = 0;
	}
	s->nregs = n;
}

uc_err emu_add_hooks(emu_state *s)
{
	uc_err err;
	// begin > end: every address.
	err = uc_hook_add(s->uc, &s->code_hook, UC_HOOK_CODE, (void *)emu_on_code, s, 1, 0);
	if (err)
		return err;
	err = uc_hook_add(s->uc, &s->mem_hook, UC_HOOK_MEM_INVALID, (void *)emu_on_mem_invalid, s, 1, 0);
	if (err)
		return err;
	err = uc_hook_add(s->uc, &s->intr_hook, UC_HOOK_INTR, (void *)emu_on_intr, s, 1, 0);
	if (err)
		return err;
	err = uc_hook_add(s->uc, &s->insn_hook, UC_HOOK_INSN_INVALID, (void *)emu_on_insn_invalid, s, 1, 0);
	if (err)
		return err;
	if (s->x86) {
		// Unicorn skips syscall and sysenter silently unless hooked.
		err = uc_hook_add(s->uc, &s->syscall_hook, UC_HOOK_INSN, (void *)emu_on_syscall, s, 1, 0, UC_X86_INS_SYSCALL);
		if (err)
			return err;
		err = uc_hook_add(s->uc, &s->sysenter_hook, UC_HOOK_INSN, (void *)emu_on_syscall, s, 1, 0, UC_X86_INS_SYSENTER);
	}
	return err;
}

uc_err emu_run(emu_state *s, uint64_t begin, uint64_t until)
{
	return uc_emu_start(s->uc, begin, until, 0, 0);
}

uc_err emu_invalidate(uc_engine *uc, uint64_t begin, uint64_t end)
{
	return uc_ctl_remove_cache(uc, begin, end);
}

uc_err emu_flush(uc_engine *uc)
{
	return uc_ctl_flush_tb(uc);
}

// emu_cp_or sets bits in an AArch64 system register through the
// coprocessor interface (the Go binding's RegWrite passes a single word,
// not this struct) and returns the new value.
uc_err emu_cp_or(uc_engine *uc, uint32_t op0, uint32_t op1, uint32_t crn, uint32_t crm, uint32_t op2, uint64_t bits, uint64_t *out)
{
	uc_arm64_cp_reg r;
	uc_err err;
	memset(&r, 0, sizeof r);
	r.op0 = op0;
	r.op1 = op1;
	r.crn = crn;
	r.crm = crm;
	r.op2 = op2;
	err = uc_reg_read(uc, UC_ARM64_REG_CP_REG, &r);
	if (err)
		return err;
	if (bits) {
		r.val |= bits;
		err = uc_reg_write(uc, UC_ARM64_REG_CP_REG, &r);
		if (err)
			return err;
		err = uc_reg_read(uc, UC_ARM64_REG_CP_REG, &r);
	}
	*out = r.val;
	return err;
}

uc_err emu_write_regs(uc_engine *uc, const int *ids, const uint64_t *vals, int n)
{
	void *ptrs[EMU_MAXREGS];
	int i;
	if (n > EMU_MAXREGS)
		return UC_ERR_ARG;
	for (i = 0; i < n; i++)
		ptrs[i] = (void *)&vals[i];
	return uc_reg_write_batch(uc, ids, ptrs, n);
}

uc_err emu_read_regs(uc_engine *uc, const int *ids, uint64_t *vals, int n)
{
	void *ptrs[EMU_MAXREGS];
	int i;
	if (n > EMU_MAXREGS)
		return UC_ERR_ARG;
	for (i = 0; i < n; i++)
		ptrs[i] = &vals[i];
	return uc_reg_read_batch(uc, ids, ptrs, n);
}

unsigned int emu_version(void)
{
	return uc_version(NULL, NULL);
}

uc_err emu_set_tcg_buffer(uc_engine *uc, uint32_t size)
{
	return uc_ctl_set_tcg_buffer_size(uc, size);
}
