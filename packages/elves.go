package packages

import (
	"bytes"
	"debug/elf"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Output is one ELF file a build produced: a file of the build tree, or a
// member of a static archive (extracted to a file of its own).
type Output struct {
	Rel  string // path relative to the build's work directory; "lib/libz.a(adler32.o)" for a member
	Path string // the file to check
	Type string // REL, EXEC, DYN
}

// notBuilt says whether a path of the build tree is not an output of the
// package's build: CMake's compiler identification programs and scratch
// builds.
// CMake's own programs live under CMakeFiles/ (compiler identification,
// ABI detection, CheckTypeSize and try_compile programs); the package's
// objects under CMakeFiles/<target>.dir/.
func notBuilt(rel string) bool {
	i := strings.Index(rel, "CMakeFiles/")
	return i >= 0 && !strings.Contains(rel[i:], ".dir/")
}

// collect walks the work directory's src and build trees for ELF files
// and static archives the build made (a file also in the package's
// original source tree, orig, is not the build's) and extracts the
// archives' ELF members under members/. It returns the outputs, sorted by
// path, and how many ELF files the source tree itself shipped.
func collect(work, orig string) ([]Output, int, error) {
	var out []Output
	shipped := 0
	memDir := filepath.Join(work, "members")
	os.RemoveAll(memDir)
	for _, sub := range []string{"src", "build"} {
		root := filepath.Join(work, sub)
		if _, err := os.Stat(root); err != nil {
			continue
		}
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return err
			}
			rel, _ := filepath.Rel(work, p)
			if notBuilt(rel) {
				return nil
			}
			magic, err := readMagic(p)
			if err != nil {
				return err
			}
			isELF, isAr := bytes.HasPrefix(magic, []byte("\x7fELF")), bytes.HasPrefix(magic, []byte("!<arch>\n"))
			if !isELF && !isAr {
				return nil
			}
			if sub == "src" {
				inSrc, _ := filepath.Rel(root, p)
				if _, err := os.Stat(filepath.Join(orig, inSrc)); err == nil {
					shipped++
					return nil
				}
			}
			if isELF {
				typ, err := elfType(p)
				if err != nil {
					return nil // not one of ours to judge: check would say so, but it is not an output
				}
				out = append(out, Output{Rel: rel, Path: p, Type: typ})
				return nil
			}
			members, err := extractMembers(p, rel, filepath.Join(memDir, strings.ReplaceAll(rel, "/", "_")))
			if err != nil {
				return fmt.Errorf("%s: %w", rel, err)
			}
			out = append(out, members...)
			return nil
		})
		if err != nil {
			return nil, shipped, err
		}
	}
	return out, shipped, nil
}

func readMagic(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, 8)
	n, _ := io.ReadFull(f, b)
	return b[:n], nil
}

func elfType(p string) (string, error) {
	f, err := elf.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	switch f.Type {
	case elf.ET_REL:
		return "REL", nil
	case elf.ET_EXEC:
		return "EXEC", nil
	case elf.ET_DYN:
		return "DYN", nil
	}
	return "", fmt.Errorf("ELF type %v", f.Type)
}

// extractMembers writes the ELF members of the ar archive at path into
// dir, one file each (numbered: two members may share a name), and
// returns them. The format: "!<arch>\n", then per member a 60-byte header
// (name 16, date 12, uid 6, gid 6, mode 8, size 10, "`\n") and the data,
// padded to an even offset; GNU's "/" (symbol table) and "//" (long
// names) members, and "/N" names pointing into the latter.
func extractMembers(path, rel, dir string) ([]Output, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if !bytes.HasPrefix(data, []byte("!<arch>\n")) {
		return nil, fmt.Errorf("not an ar archive (thin archives are not read)")
	}
	var out []Output
	var longNames []byte
	off := 8
	for n := 0; off < len(data); n++ {
		if off+60 > len(data) {
			return out, fmt.Errorf("member header at byte %d runs past the end (%d bytes)", off, len(data))
		}
		h := data[off : off+60]
		if string(h[58:60]) != "`\n" {
			return out, fmt.Errorf("member header at byte %d: bad terminator %q", off, h[58:60])
		}
		size, err := strconv.Atoi(strings.TrimSpace(string(h[48:58])))
		if err != nil || size < 0 || off+60+size > len(data) {
			return out, fmt.Errorf("member header at byte %d: bad size %q", off, h[48:58])
		}
		body := data[off+60 : off+60+size]
		name := strings.TrimRight(string(h[0:16]), " ")
		off += 60 + size + size%2
		switch {
		case name == "/" || name == "/SYM64/":
			continue
		case name == "//":
			longNames = body
			continue
		case strings.HasPrefix(name, "/"):
			i, err := strconv.Atoi(name[1:])
			if err != nil || i < 0 || i >= len(longNames) {
				return out, fmt.Errorf("member name %q at byte %d: no such long name", name, off)
			}
			end := bytes.IndexByte(longNames[i:], '\n')
			if end < 0 {
				end = len(longNames) - i
			}
			name = string(longNames[i : i+end])
		}
		name = strings.TrimSuffix(name, "/")
		if !bytes.HasPrefix(body, []byte("\x7fELF")) {
			continue
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return out, err
		}
		p := filepath.Join(dir, fmt.Sprintf("%03d-%s", n, filepath.Base(name)))
		if err := os.WriteFile(p, body, 0o644); err != nil {
			return out, err
		}
		typ, err := elfType(p)
		if err != nil {
			continue
		}
		out = append(out, Output{Rel: rel + "(" + name + ")", Path: p, Type: typ})
	}
	return out, nil
}

// Sizes are the unwind sections of one file, in bytes (0: none).
type Sizes struct {
	SFrame     uint64 `json:"sframe"`
	EHFrame    uint64 `json:"eh_frame"`
	EHFrameHdr uint64 `json:"eh_frame_hdr"`
	Text       uint64 `json:"text"` // bytes of executable sections
}

// Add sums sizes.
func (s Sizes) Add(o Sizes) Sizes {
	return Sizes{s.SFrame + o.SFrame, s.EHFrame + o.EHFrame, s.EHFrameHdr + o.EHFrameHdr, s.Text + o.Text}
}

// EH is .eh_frame plus .eh_frame_hdr: what .sframe is set against.
func (s Sizes) EH() uint64 { return s.EHFrame + s.EHFrameHdr }

// Ratio is .sframe over .eh_frame + .eh_frame_hdr; 0 when there is no
// .eh_frame.
func (s Sizes) Ratio() float64 {
	if s.EH() == 0 {
		return 0
	}
	return float64(s.SFrame) / float64(s.EH())
}

func sectionSizes(p string) (Sizes, error) {
	f, err := elf.Open(p)
	if err != nil {
		return Sizes{}, err
	}
	defer f.Close()
	var s Sizes
	for _, sec := range f.Sections {
		if sec.Type == elf.SHT_NOBITS {
			continue
		}
		switch sec.Name {
		case ".sframe":
			s.SFrame += sec.Size
		case ".eh_frame":
			s.EHFrame += sec.Size
		case ".eh_frame_hdr":
			s.EHFrameHdr += sec.Size
		}
		if sec.Flags&elf.SHF_EXECINSTR != 0 {
			s.Text += sec.Size
		}
	}
	return s, nil
}
