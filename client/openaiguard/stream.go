package openaiguard

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/guardrail-control/guard"
)

// maxLine bounds one line of a server-sent event stream (4 MiB).
const maxLine = 4 << 20

// lineReader reads lines of at most maxLine bytes, newline included.
type lineReader struct {
	br  *bufio.Reader
	buf []byte
}

func newLineReader(r io.Reader) *lineReader { return &lineReader{br: bufio.NewReaderSize(r, 16<<10)} }

// next returns the next line (with its "\n", or without at the end of the stream) and io.EOF after the
// last one.
func (l *lineReader) next() ([]byte, error) {
	l.buf = l.buf[:0]
	for {
		frag, err := l.br.ReadSlice('\n')
		l.buf = append(l.buf, frag...)
		if len(l.buf) > maxLine {
			return nil, fmt.Errorf("openaiguard: a line of the event stream is longer than %d bytes", maxLine)
		}
		switch {
		case err == nil:
			return l.buf, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(l.buf) > 0:
			return l.buf, nil // the last line has no newline; the next call returns io.EOF
		default:
			return nil, err
		}
	}
}

// streamBody passes a chat completion's event stream through line by line, assembles the text deltas of
// each choice, and runs the post check when the stream ends: before handing out its "data: [DONE]" line,
// or at the end of the body when there is none. A deny or a steer (or an error of the check) is returned
// by Read instead of the end, so the OpenAI client's stream ends with that error.
type streamBody struct {
	rc      io.ReadCloser
	sc      *lineReader
	ctx     context.Context
	c       Checker
	step    *guard.Step
	pending []byte
	texts   map[int]*strings.Builder
	checked bool
	err     error // sticky: io.EOF after a clean end, else what stopped the stream
}

// Read implements io.Reader.
func (s *streamBody) Read(p []byte) (int, error) {
	for len(s.pending) == 0 {
		if s.err != nil {
			return 0, s.err
		}
		line, err := s.sc.next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				if cerr := s.check(); cerr != nil {
					err = cerr
				}
			}
			s.err = err
			continue
		}
		if data, ok := eventData(line); ok {
			if bytes.Equal(data, []byte("[DONE]")) {
				if cerr := s.check(); cerr != nil {
					s.err = cerr
					continue
				}
			} else {
				s.collect(data)
			}
		}
		s.pending = line
	}
	n := copy(p, s.pending)
	s.pending = s.pending[n:]
	return n, nil
}

// Close implements io.Closer.
func (s *streamBody) Close() error { return s.rc.Close() }

// eventData returns the value of a "data:" line, without the optional space and the line ending.
func eventData(line []byte) ([]byte, bool) {
	v, ok := bytes.CutPrefix(line, []byte("data:"))
	if !ok {
		return nil, false
	}
	v = bytes.TrimPrefix(v, []byte(" "))
	return bytes.TrimRight(v, "\r\n"), true
}

// collect adds the text deltas of one chunk. A chunk that is not the JSON of a completion chunk (an error
// event, a keep-alive) adds nothing.
func (s *streamBody) collect(data []byte) {
	var chunk struct {
		Choices []struct {
			Index int `json:"index"`
			Delta struct {
				Content string `json:"content"`
			} `json:"delta"`
		} `json:"choices"`
	}
	if json.Unmarshal(data, &chunk) != nil {
		return
	}
	for _, ch := range chunk.Choices {
		if ch.Delta.Content == "" {
			continue
		}
		if s.texts == nil {
			s.texts = map[int]*strings.Builder{}
		}
		b := s.texts[ch.Index]
		if b == nil {
			b = &strings.Builder{}
			s.texts[ch.Index] = b
		}
		b.WriteString(ch.Delta.Content)
	}
}

// check runs the post check once on the assembled text (the choices in index order, joined with "\n").
func (s *streamBody) check() error {
	if s.checked {
		return nil
	}
	s.checked = true
	idx := make([]int, 0, len(s.texts))
	for i := range s.texts {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	parts := make([]string, len(idx))
	for k, i := range idx {
		parts[k] = s.texts[i].String()
	}
	s.step.Output = strings.Join(parts, "\n")
	return s.c.CheckStep(s.ctx, s.step, guard.StagePost)
}
