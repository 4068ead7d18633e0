package html

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
)

// Report is one HTML page.
type Report struct {
	Title string
	// Lines say what made the report (the command, the seed, the shards).
	Lines    []string
	Verdicts []string // the matrix's verdict columns, in order
	Matrix   []Cell
	Notes    []string // said under the matrix: unsupported cells, patterns left out
	Failures []Failure
	// Unshown are failures listed without their detail (over the limit,
	// or a reproducer that did not replay), with why.
	Unshown []Link
}

// Cell is a row of the matrix.
type Cell struct {
	Target, Producer, Consumer string
	Status                     string // clean, failed, unsupported, error
	Reason                     string
	Programs, Instructions     int
	Counts                     []int // per Report.Verdicts
	Failed                     int
	Version                    string
	Links                      []Link // to the cell's failures
}

// Link is a failure as the matrix names it.
type Link struct {
	Text, Href string
	Why        string // for Unshown: why no detail
}

// Failure is one failing step worked through.
type Failure struct {
	ID      string // the anchor of its section; its failing step is "failing-step-"+index
	Title   string
	File    string // the reproducer
	Facts   [][2]string
	Verdict string
	Detail  string
	// Function names the failing function; Steps are its instructions.
	Function string
	Steps    []Step
	Frames   []Frame
	Stack    *Stack // nil: the reproducer has no machine state
	// StepID is the id of the failing instruction's row.
	StepID string
}

// Step is one instruction of the failing function.
type Step struct {
	Addr, Where, Insn string
	Row               string // the row of the section covering it
	// Ran: the step index of its last execution up to the failing step
	// ("" when it did not run by then); Verdict there; Oracle, the
	// oracle's frames there.
	Ran, Verdict, Oracle string
	Failing              bool
}

// Frame is one frame of the failing step, expected against got.
type Frame struct {
	Index  int
	Row    string // the row the frame was unwound by
	Fields []Field
}

// Field is one value of a frame, expected against got.
type Field struct {
	Name, Expected, Got string
	Differs             bool
}

// Stack is the stack at the failing step: its slots from the lowest
// address shown up.
type Stack struct {
	Note  string
	Slots []Slot
}

// Slot is one stack word and what lies there.
type Slot struct {
	Addr, Value string
	Symbol      string // the code the value points into, if any
	Marks       []Mark
}

// Mark says what a slot is to the machine or to the consumer.
type Mark struct {
	Text string
	// Kind styles it: "sp", "fp", "cfa" (the oracle's), "saved" (a saved
	// RA or FP, per the oracle), "read" (where the consumer's row looked),
	// "bad" (where it looked, and the oracle disagrees).
	Kind string
}

//go:embed report.tmpl
var pageText string

var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"inc": func(i int) int { return i + 1 },
}).Parse(pageText))

// Render writes the page.
func Render(w io.Writer, r *Report) error {
	var b bytes.Buffer
	if err := page.Execute(&b, r); err != nil {
		return fmt.Errorf("html: %w", err)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// WriteFile renders the page into dir as name (index.html when empty)
// and returns its path.
func WriteFile(dir, name string, r *Report) (string, error) {
	if name == "" {
		name = "index.html"
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	var b bytes.Buffer
	if err := Render(&b, r); err != nil {
		return "", err
	}
	path := filepath.Join(dir, name)
	return path, os.WriteFile(path, b.Bytes(), 0o644)
}
