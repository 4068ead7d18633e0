package toolchain

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// The ci/setup.sh steps that provision what this package finds. A plug-in
// says which step provides it (consumer.About, producer.About); NoSetup is
// the step of a plug-in built into sfconform.
const (
	NoSetup       = -1 // built in: no setup step provides it
	SetupHost     = 1  // host packages: gcc, make, the cross binutils 2.40 and gcc cross compilers on PATH
	SetupBinutils = 4  // GNU binutils of bookworm, trixie and sid under $SFCONFORM_CACHE/toolchains
	SetupLLVM     = 5  // sid's llvm-mc and llvm-readobj under $SFCONFORM_CACHE/toolchains
	SetupRealCode = 8  // csmith, cvise and the C code bases' source packages
	// SetupBinutilsSrc is not run by 'make setup': 'make binutils-src'
	// (ci/binutils-src.sh) builds binutils from sid's source package.
	SetupBinutilsSrc = 10
)

// NotProvisionedError says that something setup provides is missing: What
// names it (with where it was looked for), Step is the ci/setup.sh step
// that provides it (0: not known). It wraps ErrNotProvisioned, which is
// the one error every "not set up" site wraps.
type NotProvisionedError struct {
	What string
	Step int
}

func (e *NotProvisionedError) Error() string {
	if e.Step == SetupBinutilsSrc {
		return fmt.Sprintf("%s: not built: run 'make binutils-src' (ci/binutils-src.sh)", e.What)
	}
	if e.Step > 0 {
		return fmt.Sprintf("%s: not provisioned: run 'make setup' (ci/setup.sh step %d provides it)", e.What, e.Step)
	}
	return fmt.Sprintf("%s: not provisioned: run 'make setup'", e.What)
}

func (e *NotProvisionedError) Unwrap() error { return ErrNotProvisioned }

// SetupStep is e.Step: the method lets packages that cannot import this
// one (internal/testenv) find the error with errors.As.
func (e *NotProvisionedError) SetupStep() int { return e.Step }

// NotProvisioned returns a *NotProvisionedError for step, its What
// formatted from format and args.
func NotProvisioned(step int, format string, args ...any) error {
	return &NotProvisionedError{What: fmt.Sprintf(format, args...), Step: step}
}

// SetupStep is the ci/setup.sh step that provides what err says is
// missing: the Step of the first *NotProvisionedError in err's tree, 0
// when there is none or it does not say.
func SetupStep(err error) int {
	var np *NotProvisionedError
	if errors.As(err, &np) {
		return np.Step
	}
	return 0
}

// ShellQuote quotes s for /bin/sh, leaving words that need no quotes
// (letters, digits and -_./=:,+@%) as they are.
func ShellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(c rune) bool {
		return !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_./=:,+@%", c))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ShellJoin quotes every argument with ShellQuote and joins them with
// spaces: a command line /bin/sh runs as args.
func ShellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = ShellQuote(a)
	}
	return strings.Join(q, " ")
}

// CompareVersions orders dotted version numbers numerically (2.9 < 2.40,
// 2.47 < 2.47.50.20261021); versions equal as numbers are ordered as
// strings, so the order is total.
func CompareVersions(a, b string) int {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) || i < len(bs); i++ {
		var x, y int
		if i < len(as) {
			x, _ = strconv.Atoi(as[i])
		}
		if i < len(bs) {
			y, _ = strconv.Atoi(bs[i])
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return strings.Compare(a, b)
}

// ReadConf reads a key=value file as ci/setup.sh writes them
// (toolchain.conf, consumer.conf): one pair a line, blank lines and #
// comments ignored. A line without "=" is an error naming the file and
// line.
func ReadConf(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	kv := map[string]string{}
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		key, value, ok := strings.Cut(text, "=")
		if !ok {
			return nil, fmt.Errorf("%s:%d: want key=value, got %q", path, line, text)
		}
		kv[key] = value
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return kv, nil
}

// What ci/setup.sh provisions in steps 4 and 5: the GNU binutils release
// series (bookworm, trixie, sid) and the LLVM major. The producers and
// dumper consumers named after them (gas-2.47, objdump-2.47,
// llvm-mc-23) are expected once setup has run: one missing is a broken
// setup, not a plug-in to leave out.
var (
	SetupBinutilsSeries = []string{"2.40", "2.44", "2.47"}
	SetupLLVMMajors     = []string{"23"}
)
