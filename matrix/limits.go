package matrix

// consumerLimits are the patterns a consumer reads the SFrame version of
// but cannot be judged on, with the reason: what its unwinder does not
// do by design, as opposed to what it does wrong.
var consumerLimits = map[string]map[string]string{
	"libsframe": {
		"signal":           libsframeSignal,
		"signal-empty-fde": libsframeSignal,
	},
}

const libsframeSignal = "the libsframe consumer's walk stops at a signal trampoline: libsframe gives the FDE's signal flag, " +
	"but reading the interrupted context from the kernel's signal frame is an architecture's signal unwinder's job, " +
	"which neither libsframe nor consumer/libsframe provides"

// PatternUnsupported says why consumer cannot be judged on the programs
// of pattern although it reads their SFrame version: "" when it can.
func PatternUnsupported(consumer, pattern string) string {
	return consumerLimits[consumer][pattern]
}
