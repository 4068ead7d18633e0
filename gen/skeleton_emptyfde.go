package gen

// The empty-fde pattern: an FDE without rows. SFrame version 3 says a
// DEFAULT FDE with no FREs marks an outermost frame ("Changes from Version
// 2 to Version 3"); libsframe and the Linux unwinder return an error
// there instead. In a real program it describes code that is outermost
// for its whole life: the entry stub. When a program has a function of
// this pattern, its entry stub gets such an FDE (its rows still say what
// holds, RA undefined, for the tests); the function itself is an ordinary
// frame-pointer function. In the assembly the stub has
// ".cfi_startproc simple" and no other CFI directive: GNU as 2.47 then
// writes an FDE with no FREs.
var emptyFDESkeleton = &pattern{
	name: "empty-fde",
	doc: "the entry stub, outermost for its whole life, is described by an FDE with no rows " +
		"(the function itself is a frame-pointer function)",
	calls:         true,
	emptyEntryFDE: true,
	versions:      []int{3},
	cannot:        "in version 2 an FDE without FREs gives no information: it cannot mark the outermost frame",
	build:         fpFrameSkeleton,
}
