package evaluator

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
)

// TestRuneBucketsMatchMap checks the compact rune table against a plain map on random fills: every rune,
// ASCII or not, gets the indexes added for it, in the order they were added.
func TestRuneBucketsMatchMap(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	runes := []rune{0, 1, '0', '?', '@', 'A', 'Z', '_', 'a', 'z', 0x7f, 0x80, 'é', 'K', 0x212a, 0x10ffff}
	for trial := range 500 {
		var b runeBuckets
		ref := map[rune][]int32{}
		n := r.IntN(40)
		for i := range n {
			var ru rune
			if r.IntN(3) == 0 {
				ru = runes[r.IntN(len(runes))]
			} else {
				ru = rune(r.IntN(0x90))
			}
			b.add(ru, int32(i))
			ref[ru] = append(ref[ru], int32(i))
		}
		b.freeze()
		for ru := rune(0); ru < 0x100; ru++ {
			if got, want := b.get(ru), ref[ru]; !slices.Equal(got, want) {
				t.Fatalf("trial %d: get(%U) = %v, want %v", trial, ru, got, want)
			}
		}
		for _, ru := range runes {
			if got, want := b.get(ru), ref[ru]; !slices.Equal(got, want) {
				t.Fatalf("trial %d: get(%U) = %v, want %v", trial, ru, got, want)
			}
		}
	}
}

// TestListIsSizedByItsValues checks that a small list holds bytes in proportion to its values, not fixed
// per-character tables (which cost about 6 KB per list).
func TestListIsSizedByItsValues(t *testing.T) {
	const n = 1000
	values := []string{"project falcon 1", "project orion 1", "Project Nebula 1", "titan", "aurora borealis"}
	heap := func() uint64 {
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	before := heap()
	lists := make([]*List, n)
	for i := range lists {
		l, err := NewList(values, ListOptions{Mode: ListContains})
		if err != nil {
			t.Fatal(err)
		}
		lists[i] = l
	}
	per := (float64(heap()) - float64(before)) / n
	runtime.KeepAlive(lists)
	if per > 1024 {
		t.Fatalf("a list of 5 values holds %.0f bytes, want at most 1024", per)
	}
	t.Logf("a list of 5 values holds %.0f bytes", per)
}
