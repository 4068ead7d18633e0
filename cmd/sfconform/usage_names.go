package main

import (
	"strings"

	"github.com/sfconform/sfconform/producer"
)

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
