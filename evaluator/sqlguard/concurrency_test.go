package sqlguard

import (
	"sync"
	"testing"
)

// TestConcurrentUse: one evaluator (and its parser) shared by goroutines, as the engine shares it (run
// with -race).
func TestConcurrentUse(t *testing.T) {
	e := build(t, map[string]any{"allowed_operations": []any{"SELECT"}, "max_joins": 1})
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				if res := eval(t, e, typicalQuery); res.Matched {
					t.Error("typical query matched")
					return
				}
				if res := eval(t, e, "DROP TABLE t"); !res.Matched {
					t.Error("DROP did not match")
					return
				}
			}
		}()
	}
	wg.Wait()
}
