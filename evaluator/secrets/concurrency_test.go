package secrets

import (
	"context"
	"sync"
	"testing"

	"github.com/guardrail-control/guard/evaluator"
)

// TestConcurrentUse: one evaluator shared by goroutines, its pooled scratch memory included (run with
// -race).
func TestConcurrentUse(t *testing.T) {
	e := build(t, nil)
	texts := []string{prose2KB, "x " + fakeGitHubPAT, fakeGeneric}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				text := texts[i%len(texts)]
				res, err := e.Evaluate(context.Background(), &evaluator.Data{Value: text, Text: text})
				if err != nil || res.Matched != (i%len(texts) != 0) {
					t.Errorf("%d: matched %v err %v", i, res.Matched, err)
					return
				}
			}
		}()
	}
	wg.Wait()
}
