package server

import (
	"strconv"
	"strings"

	guard "github.com/guardrail-control/guard"
)

// etag is the strong entity tag of an agent's controls at revision rev: "r<rev>".
func etag(rev guard.Revision) string {
	return `"r` + strconv.FormatInt(int64(rev), 10) + `"`
}

// etagMatches reports whether an If-None-Match header value matches tag (weak comparison, as RFC 9110
// prescribes for If-None-Match; "*" matches any current representation).
func etagMatches(header, tag string) bool {
	if header == "" {
		return false
	}
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimSpace(t)
		if t == "*" {
			return true
		}
		t = strings.TrimPrefix(t, "W/")
		if t == tag {
			return true
		}
	}
	return false
}
