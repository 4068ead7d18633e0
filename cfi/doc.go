// Package cfi reads DWARF call frame information (.eh_frame as the Linux
// psABIs define it, .debug_frame as DWARF 2-5 do) and interprets it into
// rows: for each location, the CFA rule and the rule of each tracked
// register. It is what `sfconform check` compares SFrame rows with.
//
// It implements DWARF 5 section 6.4 (Call Frame Information) with the
// GNU extensions GNU as and GCC emit: the "zPLRSBG" augmentations of the
// LSB (Linux Standard Base Core Specification, 10.6 "Exception Frames"),
// the DW_EH_PE pointer encodings, DW_CFA_GNU_args_size,
// DW_CFA_GNU_negative_offset_extended, and on AArch64
// DW_CFA_AARCH64_negate_ra_state (0x2d, the opcode SPARC calls
// DW_CFA_GNU_window_save) and DW_CFA_AARCH64_negate_ra_state_with_pc
// (0x2c), which toggle whether the return address is signed (AAPCS64
// DWARF supplement, "Call frame instructions"). Either byte order.
//
// DWARF expressions (DW_CFA_def_cfa_expression, DW_CFA_expression,
// DW_CFA_val_expression) are kept as bytes; Expr.Simple recognises the
// forms a register-plus-offset rule can say (DW_OP_bregN off, optionally
// followed by DW_OP_deref; the implicit CFA plus a constant), which is
// all an SFrame rule can express.
//
// Relocatable objects: the caller applies the relocations of the section
// first (the check package does, at a fixed layout).
//
// # Security
//
// Parse and Rows accept untrusted input: every read is bounds-checked, a
// malformed entry is a *FormatError with its byte offset in the section,
// and the work is linear in the input (the remember/restore stack is
// bounded).
package cfi
