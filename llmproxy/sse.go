package llmproxy

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"
	"time"
)

// sseEvent is one server-sent event: its type ("" for the default "message") and its data lines joined.
type sseEvent struct {
	event string
	data  []byte
}

// sseReader reads server-sent events, each bounded to max bytes.
type sseReader struct {
	br  *bufio.Reader
	max int
}

var errEventTooLarge = errors.New("llmproxy: a server-sent event is larger than the proxy's limit")

func newSSEReader(r io.Reader, max int) *sseReader {
	return &sseReader{br: bufio.NewReaderSize(r, 4<<10), max: max}
}

// line reads one line without its end of line (\n, \r\n).
func (s *sseReader) line() ([]byte, error) {
	var long []byte
	for {
		frag, err := s.br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long = append(long, frag...)
			if len(long) > s.max {
				return nil, errEventTooLarge
			}
			continue
		}
		if err != nil && (len(frag) == 0 && len(long) == 0 || err != io.EOF) {
			return nil, err
		}
		if long != nil {
			frag = append(long, frag...)
		}
		frag = bytes.TrimSuffix(frag, []byte("\n"))
		return bytes.TrimSuffix(frag, []byte("\r")), nil
	}
}

// next reads the next event; io.EOF at the end of the stream.
func (s *sseReader) next() (sseEvent, error) {
	var ev sseEvent
	have := false
	for {
		ln, err := s.line()
		if err != nil {
			if err == io.EOF && have {
				return ev, nil
			}
			return ev, err
		}
		if len(ln) == 0 {
			if have {
				return ev, nil
			}
			continue
		}
		if ln[0] == ':' { // a comment (keep-alive)
			continue
		}
		field, value, _ := bytes.Cut(ln, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "event":
			ev.event = string(value)
			have = true
		case "data":
			if ev.data != nil {
				ev.data = append(ev.data, '\n')
			}
			ev.data = append(ev.data, value...)
			have = true
			if len(ev.data) > s.max {
				return ev, errEventTooLarge
			}
		}
	}
}

// sseWriter writes server-sent events to the client, flushing each.
type sseWriter struct {
	w   http.ResponseWriter
	rc  *http.ResponseController
	buf []byte
}

func newSSEWriter(w http.ResponseWriter) *sseWriter {
	rc := http.NewResponseController(w)
	// A stream lasts as long as the model writes: the server's write timeout must not cut it.
	_ = rc.SetWriteDeadline(time.Time{})
	return &sseWriter{w: w, rc: rc}
}

// send writes one event (event "" for a data-only event) and flushes it.
func (s *sseWriter) send(event string, data []byte) error {
	s.buf = s.buf[:0]
	if event != "" {
		s.buf = append(s.buf, "event: "...)
		s.buf = append(s.buf, event...)
		s.buf = append(s.buf, '\n')
	}
	s.buf = append(s.buf, "data: "...)
	s.buf = append(s.buf, data...)
	s.buf = append(s.buf, "\n\n"...)
	if _, err := s.w.Write(s.buf); err != nil {
		return err
	}
	return s.rc.Flush()
}
