package toxicity

import (
	"context"
	"net/http"
	"testing"
)

// BenchmarkToxicityEvaluator measures one ext.toxicity evaluation against a moderation service on
// loopback that answers at once: the cost the evaluator adds around the network round trip (request
// encoding, HTTP, response decoding, scoring). The server's own work is included in the figures.
func BenchmarkToxicityEvaluator(b *testing.B) {
	body := []byte(`{"id":"modr-1","model":"omni-moderation-test","results":[{"flagged":false,"categories":{},` +
		`"category_scores":{"harassment":0.12,"harassment/threatening":0.01,"hate":0.02,"hate/threatening":0.001,` +
		`"self-harm":0.001,"sexual":0.003,"sexual/minors":0.0001,"violence":0.01,"violence/graphic":0.001}}]}`)
	svc := newService(b, func(_ int, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	})
	ev := buildTest(b, svc.srv.URL, cfg("gt", 0.5))
	d := text("Could you summarise the attached meeting notes and list the action items for each person?")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ev.Evaluate(ctx, d); err != nil {
			b.Fatal(err)
		}
	}
}
