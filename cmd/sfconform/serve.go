package main

import (
	"fmt"
	"io"
	"os"

	"github.com/sfconform/sfconform/consumer"
)

func init() {
	register("serve", "speak the unwind protocol on stdin/stdout with an in-process consumer (a reference for external ones)", cmdServe)
}

const serveUsage = `usage: sfconform serve [--consumer NAME]

Speaks the consumer side of the unwind protocol (docs/consumer-protocol.md)
on standard input and output, unwinding with an in-process consumer
(default: builtin). It is the reference implementation of the protocol:

  sfconform run --consumer 'exec:sfconform serve'

must judge every step exactly as --consumer builtin does.
`

func cmdServe(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("serve", serveUsage, stderr)
	name := fs.String("consumer", "builtin", "in-process consumer to serve")
	if _, err := parseArgs(fs, args, 0, 0, stdout); err != nil {
		return parseExit(err)
	}
	c, err := consumer.New(*name)
	if err != nil {
		fmt.Fprintln(stderr, "sfconform serve:", err)
		return exitSetup
	}
	defer c.Close()
	if c.BatchSize() > 1 {
		fmt.Fprintf(stderr, "sfconform serve: %s is itself an out-of-process consumer\n", *name)
		return exitSetup
	}
	if err := consumer.Serve(os.Stdin, stdout, c); err != nil {
		fmt.Fprintln(stderr, "sfconform serve:", err)
		return exitFailure
	}
	return exitOK
}
