package server

import (
	"encoding/json"
	"net/http"
	"strconv"
	"sync"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/internal/jsonstr"
)

// The evaluation response is the hot path's largest cost after the engine; it is encoded by hand into a
// pooled buffer. The output is the JSON encoding/json produces for guard.Result (a test checks that they
// decode to the same value over the decision corpus and edge cases) plus null for the fields the reference
// implementation always writes and guard omits when empty (reason; a control's steering_context, and its
// result's message, metadata and error): the reference's typed clients refuse an answer without them.
// Free-form metadata maps and strings that need escaping go through encoding/json.

var jsonContentType = []string{"application/json"}

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// writeResult writes res as the 200 response of POST /evaluation.
func writeResult(w http.ResponseWriter, res *guard.Result) error {
	bp := bufPool.Get().(*[]byte)
	b := (*bp)[:0]
	if n := resultSize(res); n > cap(b) {
		// A large result (hundreds of controls) is written into one buffer of its size, not into one
		// that doubles its way there (copying the response over and over).
		b = make([]byte, 0, n)
	}
	b, err := appendResult(b, res)
	if err != nil {
		bufPool.Put(bp)
		return err
	}
	b = append(b, '\n')
	// Assigned, not Set: the keys are canonical already and the Content-Type slice is shared (Header.Set
	// and Add never write into an existing slice).
	h := w.Header()
	h["Content-Type"] = jsonContentType
	h["Content-Length"] = []string{strconv.Itoa(len(b))}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
	if cap(b) <= 64<<10 {
		*bp = b
		bufPool.Put(bp)
	}
	return nil
}

// resultSize is about the size of the encoding of r: exact for the fixed parts and the strings that need
// no escaping, with an allowance for metadata maps (whose encoding is not measured). The buffer grows as
// usual when it falls short (escaped characters, large metadata).
func resultSize(r *guard.Result) int {
	n := 96 + len(r.Reason) + 50 + 14 // "is_safe" ... "non_matches", the final newline, "reason":null
	if r.SteeringContext != nil {
		n += steeringSize(r.SteeringContext)
	}
	for _, l := range [][]guard.ControlResult{r.Matches, r.Errors, r.NonMatches} {
		for i := range l {
			c := &l[i]
			// {"control_execution_id":"…","control_id":…,"control_name":"…","action":"…",
			// "result":{"matched":false,"confidence":…}} and a comma: 113 bytes and the values, and at
			// most 82 of reference nulls (message, metadata, error, steering_context).
			n += 113 + 82 + len(c.ControlExecutionID) + len(c.ControlName) + len(c.Action) + digits(c.ControlID)
			if conf := c.Result.Confidence; conf != 0 && conf != 1 {
				n += 24 // the longest float encoding/json writes
			} else {
				n++
			}
			if c.Result.Message != "" {
				n += 13 + len(c.Result.Message)
			}
			if c.Result.Error != "" {
				n += 11 + len(c.Result.Error)
			}
			if len(c.Result.Metadata) > 0 {
				n += 64
			}
			if c.SteeringContext != nil {
				n += steeringSize(c.SteeringContext)
			}
			if len(c.Metadata) > 0 {
				n += 64
			}
		}
	}
	return n
}

// digits is the length of the decimal form of v.
func digits(v int64) int {
	n := 1
	if v < 0 {
		n++
	}
	for v >= 10 || v <= -10 {
		v /= 10
		n++
	}
	return n
}

// steeringSize is the size of ,"steering_context":{"message":"…","required_actions":[…]}.
func steeringSize(s *guard.SteeringContext) int {
	n := 60 + len(s.Message)
	for _, a := range s.RequiredActions {
		n += 3 + len(a)
	}
	return n
}

func appendResult(b []byte, r *guard.Result) ([]byte, error) {
	var err error
	b = append(b, `{"is_safe":`...)
	b = strconv.AppendBool(b, r.IsSafe)
	b = append(b, `,"decision":`...)
	b = jsonstr.Append(b, string(r.Decision), true)
	b = append(b, `,"confidence":`...)
	if b, err = appendFloat(b, r.Confidence); err != nil {
		return nil, err
	}
	if r.Reason != "" {
		b = append(b, `,"reason":`...)
		b = jsonstr.Append(b, r.Reason, true)
	} else {
		b = append(b, `,"reason":null`...)
	}
	if r.SteeringContext != nil {
		b = append(b, `,"steering_context":`...)
		b = appendSteering(b, r.SteeringContext)
	}
	for _, l := range []struct {
		key  string
		list []guard.ControlResult
	}{{`,"matches":[`, r.Matches}, {`,"errors":[`, r.Errors}, {`,"non_matches":[`, r.NonMatches}} {
		b = append(b, l.key...)
		for i := range l.list {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = appendControlResult(b, &l.list[i]); err != nil {
				return nil, err
			}
		}
		b = append(b, ']')
	}
	if r.Redacted != nil {
		b = append(b, `,"redacted":`...)
		if b, err = appendAny(b, r.Redacted); err != nil {
			return nil, err
		}
	}
	if r.Approval != nil { // rare (approval.go): encoding/json is fast enough
		b = append(b, `,"approval":`...)
		if b, err = appendAny(b, r.Approval); err != nil {
			return nil, err
		}
	}
	if r.Session != nil {
		b = append(b, `,"session":`...)
		if b, err = appendAny(b, r.Session); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

func appendControlResult(b []byte, c *guard.ControlResult) ([]byte, error) {
	var err error
	b = append(b, `{"control_execution_id":`...)
	b = jsonstr.Append(b, c.ControlExecutionID, true)
	b = append(b, `,"control_id":`...)
	b = strconv.AppendInt(b, c.ControlID, 10)
	b = append(b, `,"control_name":`...)
	b = jsonstr.Append(b, c.ControlName, true)
	b = append(b, `,"action":`...)
	b = jsonstr.Append(b, string(c.Action), true)
	b = append(b, `,"result":{"matched":`...)
	b = strconv.AppendBool(b, c.Result.Matched)
	b = append(b, `,"confidence":`...)
	if b, err = appendFloat(b, c.Result.Confidence); err != nil {
		return nil, err
	}
	if c.Result.Message != "" {
		b = append(b, `,"message":`...)
		b = jsonstr.Append(b, c.Result.Message, true)
	} else {
		b = append(b, `,"message":null`...)
	}
	if len(c.Result.Metadata) > 0 {
		b = append(b, `,"metadata":`...)
		if b, err = appendAny(b, c.Result.Metadata); err != nil {
			return nil, err
		}
	} else {
		b = append(b, `,"metadata":null`...)
	}
	if c.Result.Error != "" {
		b = append(b, `,"error":`...)
		b = jsonstr.Append(b, c.Result.Error, true)
	} else {
		b = append(b, `,"error":null`...)
	}
	b = append(b, '}')
	if c.SteeringContext != nil {
		b = append(b, `,"steering_context":`...)
		b = appendSteering(b, c.SteeringContext)
	} else {
		b = append(b, `,"steering_context":null`...)
	}
	if len(c.Metadata) > 0 {
		b = append(b, `,"metadata":`...)
		if b, err = appendAny(b, c.Metadata); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

func appendSteering(b []byte, s *guard.SteeringContext) []byte {
	b = append(b, `{"message":`...)
	b = jsonstr.Append(b, s.Message, true)
	b = append(b, `,"required_actions":[`...)
	for i, a := range s.RequiredActions {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonstr.Append(b, a, true)
	}
	return append(b, ']', '}')
}

// appendFloat formats f like encoding/json.
func appendFloat(b []byte, f float64) ([]byte, error) {
	if b, ok := jsonstr.AppendFloat(b, f); ok {
		return b, nil
	}
	return appendAny(b, f) // NaN and infinities: encoding/json's own error
}

func appendAny(b []byte, v any) ([]byte, error) {
	j, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, j...), nil
}
