// Package mutation is the Ginkgo suite that proves the harness can fail.
// It injects faults into correct SFrame tables (CFA offset one word off,
// an FRE start moved by one instruction, FP or RA slot moved, CFA base
// flipped, an FRE dropped, a data-word size code or a field's byte order
// wrong, a function one instruction short) and requires every mutant that
// changes what a row yields at an executed instruction to be caught. A
// small evaluator of its own decides that, on the live machine state, so
// equivalence never rests on the unwinder under test. The kill rate per
// fault class is printed as a report entry.
package mutation
