// Command chaosconsumer is an external consumer that breaks the unwind
// protocol (docs/consumer-protocol.md, "Failures") on purpose: it serves
// the builtin consumer's answers, and at chosen or random answers commits
// one violation of a class (bad syntax, wrong INDEX, wrong NFRAMES, too
// many or too few lines, binary garbage, an overlong line, output after
// the answer, closing its output, exiting, stopping itself, sleeping,
// flooding its standard error). The consumer package's chaos tests run it
// to prove that no violation hangs the harness.
//
// Environment: CHAOS_CLASS names the class ("random" picks one each time,
// the default); CHAOS_AT=K commits it at the K-th answer (1-based) only;
// otherwise CHAOS_RATE (default 0.05) is the chance per answer;
// CHAOS_SEED seeds the choices; with CHAOS_ONCE=FILE the violation is
// committed only while FILE does not exist, and FILE is made then, so that
// a restarted process serves properly. Every violation is announced on standard
// error first ("chaos: CLASS at answer K").
package main
