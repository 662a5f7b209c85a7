// Package timeparam reads the date-times of requests (query parameters, JSON fields): RFC 3339 with a UTC
// offset no further from zero than ±14:00, the widest offset in use (UTC+14, Kiribati). Go's time.Parse
// takes any two-digit offset, up to ±99:59, so "2026-11-27T10:00:00+24:00" named an instant a day off
// from what a reader sees; such text is refused with the field's name instead.
package timeparam

import (
	"errors"
	"strings"
	"time"
)

// MaxOffset is the largest UTC offset accepted, either way.
const MaxOffset = 14 * time.Hour

// Messages of the two problems, for the 422s naming the field (codes "format" and "range").
const (
	FormatMessage = "must be an RFC 3339 date-time such as 2026-01-02T15:04:05Z"
	OffsetMessage = "must have a UTC offset from -14:00 to +14:00"
)

// ErrOffset is the error of a date-time whose UTC offset is beyond MaxOffset.
var ErrOffset = errors.New("timeparam: UTC offset beyond ±14:00")

// Parse reads an RFC 3339 date-time (fractional seconds allowed). A malformed text is time.Parse's
// error; a well-formed one with an offset beyond ±14:00 is ErrOffset.
func Parse(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		if strings.Contains(err.Error(), "time zone offset") {
			return time.Time{}, ErrOffset // Go refuses an offset hour of 24 or more itself: the same problem
		}
		return time.Time{}, err
	}
	if err := CheckOffset(t); err != nil {
		return time.Time{}, err
	}
	return t, nil
}

// CheckOffset is ErrOffset when t (decoded elsewhere, by encoding/json for instance) carries a UTC offset
// beyond ±14:00, else nil.
func CheckOffset(t time.Time) error {
	_, off := t.Zone()
	if d := time.Duration(off) * time.Second; d > MaxOffset || d < -MaxOffset {
		return ErrOffset
	}
	return nil
}

// Problem returns the code and message of a Parse error: "range" with OffsetMessage for ErrOffset, else
// "format" with FormatMessage.
func Problem(err error) (code, message string) {
	if errors.Is(err, ErrOffset) {
		return "range", OffsetMessage
	}
	return "format", FormatMessage
}
