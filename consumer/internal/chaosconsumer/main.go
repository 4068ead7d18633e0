package main

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sfconform/sfconform/consumer"
)

// Classes are the violations, in the order the tests name them.
var Classes = []string{
	"syntax", "index", "nframes", "toomany", "toofew", "garbage", "overlong",
	"after", "closeout", "exit", "stop", "sleep", "floodstderr",
}

func main() {
	class := os.Getenv("CHAOS_CLASS")
	if class == "" {
		class = "random"
	}
	at, _ := strconv.Atoi(os.Getenv("CHAOS_AT"))
	rate := 0.05
	if v, err := strconv.ParseFloat(os.Getenv("CHAOS_RATE"), 64); err == nil {
		rate = v
	}
	once := os.Getenv("CHAOS_ONCE")
	seed, _ := strconv.ParseUint(os.Getenv("CHAOS_SEED"), 10, 64)
	// The choices depend on the seed and the first INDEX this process
	// answers, so that a run with the same seed makes them again, also
	// after restarts.
	var rng *rand.Rand

	// The builtin consumer serves through a pipe; its answers pass
	// through here, where the violations are made.
	pr, pw := io.Pipe()
	go func() {
		err := consumer.Serve(os.Stdin, pw, consumer.NewBuiltin())
		pw.CloseWithError(err)
	}()
	in := bufio.NewReaderSize(pr, 1<<20)
	out := bufio.NewWriter(os.Stdout)
	answers := 0
	for {
		line, err := in.ReadString('\n')
		if err != nil {
			out.Flush()
			if err != io.EOF {
				fmt.Fprintln(os.Stderr, "chaos: serve:", err)
				os.Exit(1)
			}
			return
		}
		if !strings.HasPrefix(line, "result ") {
			out.WriteString(line)
			out.Flush()
			continue
		}
		answers++
		f := strings.Fields(line)
		if rng == nil {
			first, _ := strconv.ParseUint(f[1], 10, 64)
			rng = rand.New(rand.NewPCG(seed, first))
		}
		n, _ := strconv.Atoi(f[2])
		frames := make([]string, n)
		for i := range frames {
			if frames[i], err = in.ReadString('\n'); err != nil {
				os.Exit(1)
			}
		}
		c := ""
		switch {
		case once != "" && exists(once):
			// Committed once already, by an earlier process.
		case at > 0:
			if answers == at {
				c = class
			}
		case rng.Float64() < rate:
			c = class
		}
		if c == "random" {
			c = Classes[rng.IntN(len(Classes))]
		}
		if c != "" && once != "" {
			os.WriteFile(once, nil, 0o644)
		}
		if c != "" {
			fmt.Fprintf(os.Stderr, "chaos: %s at answer %d\n", c, answers)
		}
		commit(c, out, line, f, frames)
		out.Flush()
	}
}

// commit writes one answer (the result line and its frame lines),
// broken as class says; "" writes it as it is.
func commit(class string, out *bufio.Writer, line string, f []string, frames []string) {
	rest := strings.Join(f[3:], " ")
	whole := func() {
		out.WriteString(line)
		for _, fr := range frames {
			out.WriteString(fr)
		}
	}
	switch class {
	case "":
		whole()
	case "syntax":
		fmt.Fprintf(out, "result %s a %s\n", f[1], rest)
		for _, fr := range frames {
			out.WriteString(fr)
		}
	case "index":
		i, _ := strconv.Atoi(f[1])
		fmt.Fprintf(out, "result %d %s %s\n", i+7, f[2], rest)
		for _, fr := range frames {
			out.WriteString(fr)
		}
	case "nframes":
		fmt.Fprintf(out, "result %s %d %s\n", f[1], len(frames)+3, rest)
		for _, fr := range frames {
			out.WriteString(fr)
		}
	case "toomany":
		whole()
		out.WriteString("frame pc=1 sp=2 fp=3 cfa=4\n")
		out.WriteString("frame pc=1 sp=2 fp=3 cfa=4\n")
	case "toofew":
		// The answer without its frames: its frames are read from the
		// next answer, or never come.
		out.WriteString(line)
		if len(frames) == 0 {
			// Nothing to leave out: leave out the whole answer.
			out.Reset(os.Stdout)
		}
	case "garbage":
		b := make([]byte, 64)
		for i := range b {
			b[i] = byte(i*151 + 7)
		}
		out.Write(b)
		out.WriteByte('\n')
		whole()
	case "overlong":
		out.WriteString("result ")
		out.WriteString(strings.Repeat("9", 3<<20))
		out.WriteByte('\n')
		whole()
	case "after":
		whole()
		out.WriteString("result 0 0\nfootnote: nothing follows\n")
	case "closeout":
		out.Flush()
		os.Stdout.Close()
		time.Sleep(time.Hour)
	case "exit":
		out.Flush()
		os.Exit(3)
	case "stop":
		out.Flush()
		syscall.Kill(os.Getpid(), syscall.SIGSTOP)
		whole()
	case "sleep":
		out.Flush()
		time.Sleep(time.Hour)
	case "floodstderr":
		// A consumer may write to its standard error as much as it
		// likes: the answer itself is correct.
		chunk := []byte(strings.Repeat("chaos: noise on standard error\n", 1024))
		for i := 0; i < 256; i++ {
			os.Stderr.Write(chunk)
		}
		whole()
	default:
		fmt.Fprintf(os.Stderr, "chaos: unknown class %q\n", class)
		os.Exit(2)
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
