package consumer

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/image"
)

// loadRecorder is the builtin consumer keeping the last image Serve gave it.
type loadRecorder struct {
	Consumer
	img *image.Image
}

func (l *loadRecorder) Load(img *image.Image) error {
	l.img = img
	return l.Consumer.Load(img)
}

// Version 3 carries the image's code after the section, every range of
// it; version 2 none: its consumers never see a "code" line.
func TestProtocolCode(t *testing.T) {
	t.Parallel()
	img := x86Image(t)
	img.Segments = []image.Segment{{Addr: 0x9000, Code: []byte{0xc3}}}
	for _, v := range []int{1, 2} {
		var b bytes.Buffer
		if err := writeLoad(newLineWriter(&b), img, v); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(b.String(), "code") || strings.Contains(b.String(), "text") {
			t.Errorf("version %d is sent code:\n%s", v, b.String())
		}
	}
	var load bytes.Buffer
	if err := writeLoad(newLineWriter(&load), img, ProtocolCode); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(load.String(), "\ncode 2\ntext 1000 9090") || !strings.HasSuffix(load.String(), "\ntext 9000 c3\n") {
		t.Fatalf("version %d's load:\n%s", ProtocolCode, load.String())
	}
	rec := &loadRecorder{Consumer: NewBuiltin()}
	var out bytes.Buffer
	if err := Serve(strings.NewReader("hello "+ProtocolName+" 3\n"+load.String()+"quit\n"), &out, rec); err != nil {
		t.Fatal(err)
	}
	got := rec.img
	if got == nil || got.CodeAddr != 0x1000 || !bytes.Equal(got.Code, img.Code) || len(got.Segments) != 1 ||
		got.Segments[0].Addr != 0x9000 || !bytes.Equal(got.Segments[0].Code, []byte{0xc3}) {
		t.Errorf("Serve loaded %+v", got)
	}
	for _, bad := range []struct{ after, want string }{
		{"quit\n", "want \"code N\""},
		{"code 65\n", "N \"65\" is not 0 to 64"},
		{"code 1\ntext 1000\n", "want \"text ADDR HEXBYTES\""},
		{"code 1\ntext 1000 zz\n", "code bytes"},
	} {
		sec, _, _ := strings.Cut(load.String(), "code ")
		err := Serve(strings.NewReader("hello "+ProtocolName+" 3\n"+sec+bad.after), &bytes.Buffer{}, NewBuiltin())
		if !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q after the section: %v, want %q", bad.after, err, bad.want)
		}
	}
}
