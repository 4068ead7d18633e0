package main

import (
	"fmt"
	"io"
	"strings"
)

func init() {
	register("env", "list the environment variables sfconform reads ('sfconform help env')", cmdEnv)
}

// envVar is one environment variable the sfconform binary reads.
type envVar struct {
	name, value, meaning string
}

// envVars are every environment variable the binary reads, in the order
// printed. env_test.go holds the list to the code: every SFCONFORM_ name
// in the packages the binary links must be here.
var envVars = []envVar{
	{"SFCONFORM_CACHE", "DIR", "where 'make setup' provisioned toolchains, dumpers and the C consumers, and where they are looked for (default /var/cache/sfconform)"},
	{"SFCONFORM_CONSUMER_TIMEOUT", "DURATION", "how long an exec: consumer may take over one exchange (hello, supports, load, a batch of up to 256 steps), and a dumper consumer over one file, before it is taken for hung, killed and restarted (Go duration syntax, e.g. 30s; default 10s). A consumer that fails 5 batches in a row is given up on"},
	{"SFCONFORM_REQUIRE_SETUP", "0|1", "for tests: 1 makes a tool 'make setup' provides and that is missing a test failure instead of a skip (make test sets it); any other value is an error"},
	{"SFCONFORM_SEED", "N", "for tests: the seed of every randomized test (each logs the seed it used)"},
	{"TERM", "dumb", "no progress line rewritten in place on a terminal"},
}

const envUsage = `usage: sfconform env
       sfconform help env

Lists the environment variables sfconform reads. The tests read more of
them (seeds, campaign sizes): README.md, section "Testing", lists those.
`

func cmdEnv(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("env", envUsage+"\n"+envText(), stderr)
	if _, err := parseArgs(fs, args, 0, 0, stdout); err != nil {
		return parseExit(err)
	}
	io.WriteString(stdout, envText())
	return exitOK
}

// envText is the list, one variable a paragraph.
func envText() string {
	var b strings.Builder
	b.WriteString("Environment:\n")
	for _, v := range envVars {
		fmt.Fprintf(&b, "\n  %s=%s\n", v.name, v.value)
		for _, l := range wrap(v.meaning, 68) {
			fmt.Fprintf(&b, "      %s\n", l)
		}
	}
	return b.String()
}

// wrap breaks s into lines of at most width bytes at spaces.
func wrap(s string, width int) []string {
	var out []string
	line := ""
	for _, w := range strings.Fields(s) {
		if line != "" && len(line)+1+len(w) > width {
			out = append(out, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	if line != "" {
		out = append(out, line)
	}
	return out
}
