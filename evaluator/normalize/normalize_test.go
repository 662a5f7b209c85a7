package normalize

import (
	"strings"
	"testing"
)

func TestString(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"plain ascii unchanged", "select 1 from t", "select 1 from t"},
		{"percent", "1%27%20OR%201%3D1", "1' OR 1=1"},
		{"double percent", "%2527", "'"},
		{"nested bounded", "%25252527", "%27"},
		{"percent unicode", "%u0027x", "'x"},
		{"bad percent kept", "100% sure %zz", "100% sure %zz"},
		{"html numeric", "&#39; or &#x27;", "' or '"},
		{"html named", "&lt;script&gt; &quot;a&quot; &amp;", "<script> \"a\" &"},
		{"ampersand alone", "Tom & Jerry; ok", "Tom & Jerry; ok"},
		{"json unicode", `\u0027 or 1=1`, "' or 1=1"},
		{"backslash newline", `a\nid`, "a\nid"},
		{"hex escape", `\x3b ls`, "; ls"},
		{"full width", "\uff07\uff2f\uff32", "'OR"},
		{"math letters", "\U0001D422\U0001D420\U0001D427\U0001D428\U0001D42B\U0001D41E", "ignore"},
		{"cyrillic homoglyphs", "ign\u043er\u0435", "ignore"},
		{"zero width dropped", "ig\u200bno\u200dre", "ignore"},
		{"nbsp to space", "a\u00a0b", "a b"},
		{"other scripts kept", "größe 東京", "größe 東京"},
		{"curly quote", "admin\u2019 --", "admin' --"},
		{"ideographic full stops", "http://10\u30020\u30020\uff611/", "http://10.0.0.1/"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := String(c.in)
			if got.S != c.want {
				t.Fatalf("String(%q) = %q, want %q", c.in, got.S, c.want)
			}
			if got.Changed() != (c.in != c.want) {
				t.Errorf("Changed() = %v", got.Changed())
			}
		})
	}
}

// TestOriginal: a span of the normalised text maps to the original bytes that produced it.
func TestOriginal(t *testing.T) {
	cases := []struct{ in, find, want string }{
		{"name=%27%20OR%201=1 end", "' OR 1=1", "%27%20OR%201=1"},
		{"x &#39;a&#39; y", "'a'", "&#39;a&#39;"},
		{"pre ig\u200bnore post", "ignore", "ig\u200bnore"},
		{"\uff07\uff2f", "'O", "\uff07\uff2f"},
		{"a%2527b", "'", "%2527"},
		{"tail %41", "A", "%41"},
	}
	for _, c := range cases {
		n := String(c.in)
		i := strings.Index(n.S, c.find)
		if i < 0 {
			t.Fatalf("%q not in %q", c.find, n.S)
		}
		s, e := n.Original(i, i+len(c.find))
		if got := c.in[s:e]; got != c.want {
			t.Errorf("%q: span of %q maps to %q, want %q", c.in, c.find, got, c.want)
		}
	}
}

func TestNeededAllocFree(t *testing.T) {
	for _, s := range []string{strings.Repeat("plain ascii text ", 100), strings.Repeat("20% off for R&D; a \\ b & c ", 50)} {
		if a := testing.AllocsPerRun(100, func() { _ = String(s) }); a != 0 {
			t.Errorf("String on ASCII text without escapes allocates %v times", a)
		}
		if String(s).Changed() {
			t.Errorf("String changed text without escapes")
		}
	}
}

func FuzzString(f *testing.F) {
	for _, s := range []string{"%27", "&#39;", `\u0027`, "\uff07", "a\u200bb", "%%%", "&#xffffffff;", `\`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := String(s)
		for i := 0; i <= len(n.S); i++ {
			for j := i; j <= len(n.S) && j < i+4; j++ {
				a, b := n.Original(i, j)
				if a < 0 || b > len(s) || a > b {
					t.Fatalf("Original(%d,%d) = %d,%d of %d bytes", i, j, a, b, len(s))
				}
			}
		}
	})
}

// TestNextSpecialAgreesWithByteLoop: the eight-bytes-at-a-time search finds the same first escape or
// non-ASCII byte as a plain loop, wherever it sits in a word and from any start.
func TestNextSpecialAgreesWithByteLoop(t *testing.T) {
	naive := func(s string, i int) int {
		for ; i < len(s); i++ {
			if c := s[i]; c == '%' || c == '&' || c == '\\' || c >= 0x80 {
				return i
			}
		}
		return len(s)
	}
	base := strings.Repeat("plain text, digits 0123 and (brackets) ", 3)
	for _, special := range []string{"%", "&", "\\", "\u00e9", "\x80", "$", "'"} {
		for at := 0; at < 40; at++ {
			s := base[:at] + special + base[at:]
			for from := 0; from < 20; from++ {
				if got, want := nextSpecial(s, from), naive(s, from); got != want {
					t.Fatalf("%q from %d: %d, want %d", s, from, got, want)
				}
			}
		}
	}
	if got := nextSpecial(base, 0); got != len(base) {
		t.Fatalf("plain text: %d", got)
	}
}
