package promptattack

import (
	"bytes"
	"testing"

	"github.com/guardrail-control/guard/evaluator/promptattack/internal/model"
	"github.com/guardrail-control/guard/evaluator/promptattack/internal/training"
)

// TestWeightsReproduce retrains the model from the corpora the training program names and checks that the
// result is the embedded weights file, byte for byte (the decompressed model: gzip's output may change with
// the Go release, the model may not). It needs the shared corpora (../shared/efficacy or
// $GUARD_EFFICACY_DIR) and takes a minute or two of CPU, so -short skips it.
func TestWeightsReproduce(t *testing.T) {
	if testing.Short() {
		t.Skip("retraining takes a minute or two; run without -short")
	}
	shared := training.FindShared(".")
	if shared == "" {
		t.Skip("no shared corpora (../shared/efficacy with train/, or $GUARD_EFFICACY_DIR)")
	}
	m, _, err := training.Build(shared, "../..", training.Defaults)
	if err != nil {
		t.Fatal(err)
	}
	got := model.Marshal(m)
	want, err := model.Decompress(weightsFile, maxWeights)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("retrained weights differ from weights.bin.gz (%d vs %d bytes): run go run ./evaluator/promptattack/train from the repository root and commit the result", len(got), len(want))
	}
}

// TestWeightsFile: the embedded file decodes, is within the size budget, and re-encodes to the same bytes.
func TestWeightsFile(t *testing.T) {
	if len(weightsFile) > 20<<20 {
		t.Errorf("weights.bin.gz is %d bytes, over the 20 MB budget", len(weightsFile))
	}
	raw, err := model.Decompress(weightsFile, maxWeights)
	if err != nil {
		t.Fatal(err)
	}
	m, err := model.Unmarshal(raw)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(model.Marshal(m), raw) {
		t.Error("decode then encode changes the weights")
	}
	if _, err := model.Unmarshal(raw[:len(raw)-1]); err == nil {
		t.Error("a truncated file decodes")
	}
	if _, err := model.Unmarshal(append([]byte("XXXX"), raw[4:]...)); err == nil {
		t.Error("a file with another magic decodes")
	}
}
