package pipelines

import (
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ptGNUSFrame is the program header through which unwinders (the Linux
// kernel, glibc's backtrace) find .sframe (binutils include/elf/common.h).
const ptGNUSFrame = elf.ProgType(0x6474e554)

// lld: the programs linked by each lld (the host suite's and sid's) from
// objects gas wrote with --gsframe, PIE. GNU ld merges the inputs'
// .sframe sections into one sorted section with its own FDEs for the PLT
// and a PT_GNU_SFRAME header; what lld does is the result: a link lld
// refuses because of .sframe, a section an unwinder cannot find (no
// PT_GNU_SFRAME) or cannot use (concatenated, unsorted) is a finding.
func (b *build) lld() []Row {
	var rows []Row
	for _, l := range b.cfg.tools.lld {
		bdir := filepath.Join(b.dir, "B-"+strings.ReplaceAll(l.name, " ", "-"))
		if err := os.MkdirAll(bdir, 0o755); err != nil {
			return append(rows, b.fail(LLD, l.name, nil, err))
		}
		for name, to := range map[string]string{"as": b.tc.AS, "ld": l.path} {
			if err := os.Symlink(to, filepath.Join(bdir, name)); err != nil && !os.IsExist(err) {
				return append(rows, b.fail(LLD, l.name, nil, err))
			}
		}
		controlled := false
		for _, p := range programs {
			cs := fmt.Sprintf("%s: %s (PIE)", p.name, l.name)
			out := b.out(p.name + "-" + strings.ReplaceAll(l.name, " ", "-"))
			driver := b.cc
			if p.cxx {
				driver = b.cxx
			}
			args := []string{"-Wa,--gsframe", "-B" + bdir + "/", "-O2", "-g", "-pie", "-o", out}
			for _, s := range p.srcs {
				args = append(args, b.src(s))
			}
			c, stderr, err := b.run(driver, args...)
			if err != nil {
				rw := b.fail(LLD, cs, []string{c}, err)
				if strings.Contains(stderr, ".sframe") {
					rw.Status, rw.Detail = Finding, "lld refused the link: "+errorLine(stderr)
				}
				rows = append(rows, rw)
				continue
			}
			r, err := b.judge(out)
			rw := row(LLD, cs, b.tc, b.tg, r, err)
			rw.Commands = []string{c}
			var notes []string
			if err == nil {
				var vs []string
				for _, s := range r.Sections {
					vs = append(vs, fmt.Sprintf("v%d (%d FDEs, %s)", s.Version, s.NumFDEs, strings.Join(s.Flags, " ")))
				}
				notes = append(notes, fmt.Sprintf("%d .sframe sections one after the other: %s", len(vs), strings.Join(vs, " + ")))
			}
			if !hasProg(out, ptGNUSFrame) {
				rw.Status = Finding
				notes = append(notes, "no PT_GNU_SFRAME: unwinders do not find the section")
			}
			rw.Detail = strings.TrimPrefix(rw.Detail+"; "+strings.Join(notes, "; "), "; ")
			if _, data := sframeOf(out); !controlled && len(data) > 0 {
				rw.Control, controlled = b.control(out), true
			}
			rows = append(rows, rw)
		}
	}
	return rows
}

// hasProg says whether the ELF file at path has a program header of type t.
func hasProg(path string, t elf.ProgType) bool {
	f, err := elf.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == t {
			return true
		}
	}
	return false
}
