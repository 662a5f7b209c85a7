package secrets

import (
	"fmt"
	"strings"
	"testing"
)

// Texts of a given size for the cost-by-size benchmarks (issue 37): ordinary prose, prose dense in the rules'
// keywords (each one followed by "," or ":", which is what opens a generic-api-key window), and ordinary prose
// with one credential at its very end.
const (
	plainPara = "The deployment finished at two and the service answers again. Customers reported slow pages " +
		"between noon and one, which matches the cache eviction we saw on the shared cluster. "
	densePara = "The api key, as noted, goes in the header. Token: see the access notes; the secret, once " +
		"rotated, is stored by auth: never in the password field. "
)

// sizedText repeats para to n bytes, with tail (if any) as its last bytes.
func sizedText(para string, n int, tail string) string {
	var b strings.Builder
	for b.Len() < n-len(tail) {
		b.WriteString(para)
	}
	return b.String()[:n-len(tail)] + tail
}

// benchSizes are the sizes the cost is measured at: 1 KB to 1 MB, each 4 times the previous.
var benchSizes = []int{1 << 10, 4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20}

// BenchmarkSecretsBySize measures all rules on the three kinds of text at each size; the cost must grow
// linearly with the text (t(4x) ≤ 4.5 t(x)) and stay under 30 µs per KB.
func BenchmarkSecretsBySize(b *testing.B) {
	kinds := []struct{ name, para, tail string }{
		{"prose", plainPara, ""},
		{"dense", densePara, ""},
		{"secret_at_end", plainPara, " token: " + fakeGitHubPAT},
	}
	for _, k := range kinds {
		for _, n := range benchSizes {
			text := sizedText(k.para, n, k.tail)
			b.Run(fmt.Sprintf("%s/%dKB", k.name, n>>10), func(b *testing.B) { benchEval(b, nil, text) })
		}
	}
}
