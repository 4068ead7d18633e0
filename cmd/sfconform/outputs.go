package main

import "github.com/sfconform/sfconform/internal/outfile"

// checkOutputs checks, before a run starts, that every output place it was
// given can be written: the reproducer directory and the reports.
func checkOutputs(out, junit, html string) error {
	if out != "" {
		if err := outfile.Dir("--out", out); err != nil {
			return err
		}
	}
	if junit != "" {
		if err := outfile.File("--junit", junit); err != nil {
			return err
		}
	}
	if html != "" {
		if err := outfile.Dir("--html", html); err != nil {
			return err
		}
	}
	return nil
}
