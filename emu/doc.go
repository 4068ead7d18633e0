// Package emu runs machine code for the four SFrame targets on the Unicorn
// CPU emulator (2.1.x) and reports every instruction before it executes,
// with the registers an unwinder starts from and read access to memory.
// It is the only package that uses Unicorn.
package emu
