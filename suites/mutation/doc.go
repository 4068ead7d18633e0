// Package mutation is the Ginkgo suite that proves the harness can fail.
// It injects faults into correct SFrame tables (CFA offset one word off,
// an FRE start moved by one instruction, FP or RA slot moved, CFA base
// flipped, an FRE dropped, a data-word size code or a field's byte order
// wrong, a function one instruction short) and requires every mutant that
// changes what a row yields at an executed instruction to be caught. Its
// own small SFrame reader (checked row by row against GNU objdump's text
// of the golden sections) and evaluator decide that on the live machine
// state, and a fault placed in the rows is also judged on the rows before
// encoding, so equivalence rests on neither the decoder, the encoder nor
// the unwinder under test. The kill rate per fault class, summed over
// parallel processes, is printed as a report entry, and every fault class
// that ran must have had a mutant caught.
package mutation
