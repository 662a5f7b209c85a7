package problem

import (
	"encoding/json"
	"math"
	"math/big"
	"reflect"
	"strings"
)

// OutOfRange reports whether ute is a JSON number that could not be stored because it is beyond its
// field's range, however it is spelled: 1e400, 99999999999999999999, -1 for an unsigned field, 1e20 for
// an integer one. Such a value is a 422 with code "range" (it is a number, the right type), not "type".
// A fraction for an integer field (1.5) stays a type error; an integer spelled with an exponent and
// within range (1e2) is refused by encoding/json as well, and stays a type error ("must be an integer").
func OutOfRange(ute *json.UnmarshalTypeError) bool {
	lit, ok := strings.CutPrefix(ute.Value, "number ")
	if !ok || ute.Type == nil {
		return false
	}
	f, _, err := big.ParseFloat(lit, 10, 256, big.ToNearestEven)
	if err != nil {
		return false
	}
	switch ute.Type.Kind() {
	case reflect.Float32, reflect.Float64:
		return true // a valid number literal a float field cannot hold: beyond ±MaxFloat
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if !f.IsInt() {
			return false
		}
		bits := uint(ute.Type.Bits())
		lo := new(big.Float).SetInt64(math.MinInt64 >> (64 - bits))
		hi := new(big.Float).SetInt64(math.MaxInt64 >> (64 - bits))
		return f.Cmp(lo) < 0 || f.Cmp(hi) > 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if !f.IsInt() {
			return false
		}
		hi := new(big.Float).SetUint64(math.MaxUint64 >> (64 - uint(ute.Type.Bits())))
		return f.Sign() < 0 || f.Cmp(hi) > 0
	}
	return false
}
