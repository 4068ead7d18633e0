package outfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Write writes data to path atomically: a reader sees the old file or the
// new one, whole. A path that is not a regular file (/dev/null, /dev/stdout,
// a named pipe) is written in place: renaming a file over it would replace
// the device with a regular file, which as root breaks every later
// redirection to /dev/null on the machine.
func Write(path string, data []byte) error {
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() && !fi.IsDir() {
		return writeInPlace(path, data)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// writeInPlace writes data to a device or pipe that already exists.
func writeInPlace(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Dir checks, before a run, that files can be written into dir: dir, or
// the nearest of its parents that exists (the run makes the rest), is a
// directory that takes files. Nothing is made. flag names the option that
// gave it, for the message.
func Dir(flag, dir string) error {
	return probe(flag, dir, dir)
}

// File checks, before a run, that path can be written: it is not a
// directory, and its directory (or the nearest parent that exists) takes
// files.
func File(flag, path string) error {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("%s %s: is a directory, want a file", flag, path)
	}
	return probe(flag, path, filepath.Dir(path))
}

func probe(flag, what, dir string) error {
	for {
		fi, err := os.Stat(dir)
		if err == nil {
			if !fi.IsDir() {
				return fmt.Errorf("%s %s: %s is not a directory", flag, what, dir)
			}
			break
		}
		if !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%s %s: %w", flag, what, err)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return fmt.Errorf("%s %s: no existing directory above it", flag, what)
		}
		dir = parent
	}
	f, err := os.CreateTemp(dir, ".sfconform-probe-*")
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("%s %s: cannot write in %s: %w", flag, what, dir, err)
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}
