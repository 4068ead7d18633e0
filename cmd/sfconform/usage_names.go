package main

import (
	"strings"

	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/target"
)

// targetsHelp names the valid --targets values, for usage texts.
func targetsHelp() string {
	var n []string
	for _, t := range target.All {
		n = append(n, t.Name())
	}
	return "Targets: " + strings.Join(n, ", ") + " (or all).\n"
}

// assemblersHelp names the assemblers --assemblers takes: the provisioned
// toolchain producers ('sfconform toolchains' says more of each).
func assemblersHelp() string {
	var n []string
	for _, p := range producer.Names() {
		if strings.HasPrefix(p, "gas-") || strings.HasPrefix(p, "llvm-mc-") {
			n = append(n, p)
		}
	}
	if len(n) == 0 {
		return "Assemblers: none provisioned ('make setup' provides gas-* and llvm-mc-*).\n"
	}
	return "Assemblers provisioned here: " + strings.Join(n, ", ") + ".\n"
}
