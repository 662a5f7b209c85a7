package model

import (
	"strings"
	"testing"
)

var benchText = strings.Repeat("Install the package with your package manager, then open the configuration file and set the address of your server. Restart the service to apply the change. ", 110)[:16<<10]

// BenchmarkFeatures is the feature extraction alone over 16 KB; BenchmarkScore adds the weight lookups
// and the windows.
func BenchmarkFeatures(b *testing.B) {
	var ex Extractor
	b.SetBytes(int64(len(benchText)))
	for b.Loop() {
		for _, bl := range Blocks(benchText) {
			ex.Block(benchText[bl[0]:bl[1]])
		}
	}
}

func BenchmarkAppendBlock(b *testing.B) {
	var buf []uint32
	b.SetBytes(int64(len(benchText)))
	for b.Loop() {
		for _, bl := range Blocks(benchText) {
			buf = appendBlock(buf[:0], benchText[bl[0]:bl[1]])
		}
	}
}

func BenchmarkScore(b *testing.B) {
	m := &Model{Weights: make([]int8, Buckets*K)}
	for i := range m.Weights {
		m.Weights[i] = int8(i*7919) >> 3
	}
	var ex Extractor
	b.SetBytes(int64(len(benchText)))
	for b.Loop() {
		m.Score(benchText, &ex, nil)
	}
}
