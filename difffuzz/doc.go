// Package difffuzz fuzzes SFrame consumers against each other: sections
// that real producers wrote, mutated, are given to the builtin consumer
// (package sframe's decoder and unwinder) and to libsframe side by side,
// and to glibc's reader when a mutant still passes validation; every
// place where their answers differ is classified by who is right per the
// SFrame specification.
package difffuzz
