package matrix

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/internal/testenv"
	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/toolchain"
)

// Producers lists every registered producer that needs no argument and
// whose tools are provisioned.
func Producers() []string {
	var out []string
	for _, n := range producer.Names() {
		if _, err := producer.New(n); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// variants are consumers named with an argument that the matrix covers
// too: glibc's walker reporting the trace glibc drops as NOINFO.
var variants = map[string][]string{"glibc": {"glibc:strict"}}

// Consumers lists every registered consumer that needs no argument (an
// exec: consumer names its command only on the command line) and can be
// made here, with the variants the matrix covers.
func Consumers() []string {
	var out []string
	for _, n := range consumer.Names() {
		c, err := consumer.New(n)
		if err != nil {
			continue
		}
		c.Close()
		out = append(out, n)
		out = append(out, variants[n]...)
	}
	return out
}

// Versions names the exact version of every plug-in of the report: the
// tools a toolchain producer ran and their Debian packages (from its
// images' records), the Debian package a C consumer was built against
// (its consumer.conf from ci/setup.sh), the binutils or LLVM package of a
// dumper.
func Versions(rep *Report) map[string]string {
	out := map[string]string{}
	for _, c := range rep.Cells {
		if c.Outcome != nil && c.Outcome.Record != nil {
			out[c.Producer] = c.Outcome.Record.Versions()
		}
	}
	for _, p := range rep.Config.Producers {
		if _, ok := out[p]; !ok && strings.HasPrefix(p, "builtin") {
			out[p] = "sfconform's own encoder"
		}
	}
	binutils, _ := toolchain.All()
	llvm, _ := toolchain.LLVM()
	for _, n := range rep.Config.Consumers {
		kind, _, _ := strings.Cut(n, ":")
		switch {
		case kind == "builtin":
			out[n] = "sfconform's own unwinder"
		case kind == "libsframe" || kind == "glibc":
			out[n] = cConsumerVersion(kind)
		case strings.HasPrefix(kind, "llvm-readobj-"):
			for _, t := range llvm {
				if strings.HasPrefix(t.Version, strings.TrimPrefix(kind, "llvm-readobj-")+".") {
					out[n] = fmt.Sprintf("llvm-readobj %s (Debian %s llvm-%s %s)", t.Version, t.Suite, strings.TrimPrefix(kind, "llvm-readobj-"), t.Package)
					break
				}
			}
		case strings.HasPrefix(kind, "objdump-") || strings.HasPrefix(kind, "readelf-"):
			tool, series, _ := strings.Cut(kind, "-")
			for _, t := range binutils {
				if strings.HasPrefix(t.Version+".", series+".") {
					out[n] = fmt.Sprintf("%s %s (Debian %s binutils %s)", tool, t.Version, t.Suite, t.Package)
					break
				}
			}
		}
	}
	return out
}

// cConsumerVersion reads what ci/setup.sh wrote of the C consumer kind it
// built from this tree's sources.
func cConsumerVersion(kind string) string {
	h, err := consumer.SourceHash(kind)
	if err != nil {
		return "unknown: " + err.Error()
	}
	f, err := os.Open(filepath.Join(toolchain.CacheDir(), "consumers", kind+"-"+h, "consumer.conf"))
	if err != nil {
		return "unknown: " + err.Error()
	}
	defer f.Close()
	kv := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			kv[k] = v
		}
	}
	return fmt.Sprintf("built against Debian %s %s %s", kv["suite"], kv["package"], kv["version"])
}

// SetupProducers and SetupConsumers are the real producers and consumers
// "make setup" (ci/setup.sh) provisions, with the step that does: once
// setup has run, one that cannot be made is a broken setup, not a cell to
// skip.
var (
	SetupProducers = map[string]testenv.Step{
		"gas-2.40": testenv.Binutils, "gas-2.44": testenv.Binutils, "gas-2.47": testenv.Binutils,
		"llvm-mc-23": testenv.LLVM,
	}
	SetupConsumers = map[string]testenv.Step{
		"libsframe": testenv.LibsframeConsumer, "glibc": testenv.GlibcConsumer, "glibc:strict": testenv.GlibcConsumer,
		"objdump-2.40": testenv.Binutils, "objdump-2.44": testenv.Binutils, "objdump-2.47": testenv.Binutils,
		"readelf-2.40": testenv.Binutils, "readelf-2.44": testenv.Binutils, "readelf-2.47": testenv.Binutils,
		"llvm-readobj-23": testenv.LLVM,
	}
)
