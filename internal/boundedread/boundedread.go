// Package boundedread reads outside input named by a path or handed over as a stream (policy files, the
// client's controls file, template files, a pipe) under a size cap, in bounded memory: a regular file
// whose size is over the cap is refused from its size without reading a byte (a 10 GB sparse file costs
// nothing), and anything else (a device such as /dev/zero, a FIFO that never ends, a pipe) is read
// through an io.LimitReader, at most the cap plus one byte, so an endless stream is refused after the
// cap, never read to the end.
package boundedread

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// TooLargeError says which input passed which cap.
type TooLargeError struct {
	Name string // the path, "<stdin>", or the name in an fs.FS
	What string // what the input was read as ("policy file", "template file")
	Max  int64  // the cap in bytes
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s %s is larger than %s, the cap on a %s", e.What, e.Name, Size(e.Max), e.What)
}

// Size writes n bytes for messages: "64 MiB", "1 MiB", "512 KiB", else "N bytes".
func Size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Read reads r to its end, or fails with a *TooLargeError once more than max bytes came (having read
// max+1 at most). name and what go into the error.
func Read(r io.Reader, name, what string, max int64) ([]byte, error) {
	raw, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", what, name, err)
	}
	if int64(len(raw)) > max {
		return nil, &TooLargeError{Name: name, What: what, Max: max}
	}
	return raw, nil
}

// File reads the file at path under the cap max (see the package comment). A directory is an error
// naming it.
func File(path, what string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return fromFile(f, path, what, max)
}

// FSFile is File for a file of fsys.
func FSFile(fsys fs.FS, name, what string, max int64) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return fromFile(f, name, what, max)
}

func fromFile(f fs.File, name, what string, max int64) ([]byte, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", what, name, err)
	}
	if st.IsDir() {
		return nil, fmt.Errorf("%s %s: %w", what, name, errIsDir)
	}
	if st.Mode().IsRegular() && st.Size() > max {
		return nil, &TooLargeError{Name: name, What: what, Max: max}
	}
	return Read(f, name, what, max)
}

var errIsDir = errors.New("is a directory, not a file")
