package sqlguard

import (
	"strings"
	"unicode/utf8"
)

// unseenText says why a parser could not see all of query, or "" when it can. A verdict must cover the
// whole selected text: libpg_query (C) reads a NUL byte as the end of the text, so
// "SELECT 1\x00; DROP TABLE users" would be judged by its first statement alone, while a driver or tool
// that drops NULs runs the DROP. Invalid UTF-8 is refused too: the PostgreSQL scanner rejects it, the
// MySQL tokenizer reads it byte by byte, and neither is what the database will see once a client has
// re-encoded the text. Both dialects refuse such text alike, as unparsable (on_parse_error applies).
func unseenText(query string) string {
	if strings.IndexByte(query, 0) >= 0 {
		return "the query holds a NUL byte, which a parser reads as the end of the text"
	}
	if !utf8.ValidString(query) {
		return "the query is not valid UTF-8"
	}
	return ""
}
