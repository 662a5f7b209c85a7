package problem

import (
	"net/http"
	"reflect"

	"github.com/guardrail-control/guard/internal/strictjson"
)

// The decoding rule (docs/api.md, "Request bodies"): control-plane bodies are decoded strictly
// (DecodeJSON, DecodeBytes: an unknown field is a 422), runtime and registration bodies leniently
// (DecodeLenient, DecodeLenientBytes: unknown fields are skipped and reported to the caller, which counts
// and logs them). Both refuse invalid JSON, wrong types and duplicate keys the same way.

// MaxIgnoredPaths bounds the paths DecodeLenientBytes reports (the count it reports is exact).
const MaxIgnoredPaths = 32

// Ignored describes the unknown fields a lenient decoding skipped.
type Ignored struct {
	// Count is the number of unknown fields in the body.
	Count int
	// Paths are the dotted paths of the first MaxIgnoredPaths of them ("agent.agent_created_at",
	// "events.3.applies_to"), in body order of objects and sorted within one object. Never values.
	Paths []string
}

// DecodeLenient reads the body and decodes it into dst like DecodeJSON, except that fields dst does not
// know are skipped and described in the result.
func DecodeLenient(r *http.Request, dst any) (Ignored, error) {
	b, err := ReadBody(r)
	if err != nil {
		return Ignored{}, err
	}
	return DecodeLenientBytes(b, dst)
}

// DecodeLenientBytes decodes b into dst ignoring unknown fields (keys matched exactly: a key that differs
// from a field's name only in case is unknown, never read into the field). The common body, with no
// unknown field, costs one strict decoding; only a body with unknown fields is decoded again and walked
// to name them.
func DecodeLenientBytes(b []byte, dst any) (Ignored, error) {
	err := decode(b, dst, true)
	if err == nil || !isUnknownField(err) {
		return Ignored{}, err
	}
	v := reflect.ValueOf(dst)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return Ignored{}, err
	}
	v.Elem().Set(reflect.Zero(v.Elem().Type())) // the strict pass may have filled part of it
	if err := decode(b, dst, false); err != nil {
		return Ignored{}, err
	}
	count, paths := strictjson.Unknown(b, dst, MaxIgnoredPaths)
	return Ignored{Count: count, Paths: paths}, nil
}

func isUnknownField(err error) bool {
	pe, ok := err.(*Error)
	return ok && pe.Status == http.StatusUnprocessableEntity && len(pe.Problems) == 1 && pe.Problems[0].Code == "unknown_field"
}
