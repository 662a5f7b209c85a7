package strictjson

import (
	"math"
	"math/big"
	"reflect"
)

// outOfRange reports whether the number literal lit is beyond the range of the numeric type t, however
// it is spelled: 1e400, 99999999999999999999, -1 for an unsigned field, 1e20 for an integer one. A
// fraction for an integer field (1.5) is not (it is of the wrong kind), nor is an integer spelled with an
// exponent and within range (1e2), which the decoder also refuses for an integer.
func outOfRange(lit string, t reflect.Type) bool {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return false
	}
	f, _, err := big.ParseFloat(lit, 10, 256, big.ToNearestEven)
	if err != nil {
		return false
	}
	switch t.Kind() {
	case reflect.Float32, reflect.Float64:
		return true // a valid number literal a float field cannot hold: beyond ±MaxFloat
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if !f.IsInt() {
			return false
		}
		bits := uint(t.Bits())
		lo := new(big.Float).SetInt64(math.MinInt64 >> (64 - bits))
		hi := new(big.Float).SetInt64(math.MaxInt64 >> (64 - bits))
		return f.Cmp(lo) < 0 || f.Cmp(hi) > 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if !f.IsInt() {
			return false
		}
		hi := new(big.Float).SetUint64(math.MaxUint64 >> (64 - uint(t.Bits())))
		return f.Sign() < 0 || f.Cmp(hi) > 0
	}
	return false
}

// numberAt returns the number literal that starts at or after offset in b ("" when there is none).
func numberAt(b []byte, offset int64) string {
	i := int(offset)
	if i < 0 || i > len(b) {
		return ""
	}
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n' || b[i] == ':' || b[i] == ',' || b[i] == '[') {
		i++
	}
	j := i
	for j < len(b) && (b[j] == '-' || b[j] == '+' || b[j] == '.' || b[j] == 'e' || b[j] == 'E' || b[j] >= '0' && b[j] <= '9') {
		j++
	}
	return string(b[i:j])
}
