// Command train fits the prompt-attack classifier's weights from the corpora named in
// evaluator/promptattack/internal/training (the shared efficacy training set and development files,
// read from ../shared/efficacy, and the repository's own data), writes them to
// evaluator/promptattack/weights.bin.gz and prints recall and false positives on the held-out validation
// part. Run it from the repository root:
//
//	go run ./evaluator/promptattack/train
//
// The same data gives the same file byte for byte (fixed seed, fixed order, no fused arithmetic);
// TestWeightsReproduce checks it when the shared corpora are present.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/guardrail-control/guard/evaluator/promptattack/internal/model"
	"github.com/guardrail-control/guard/evaluator/promptattack/internal/training"
)

func main() {
	shared := flag.String("shared", "", "the shared efficacy directory (holds train/); default $GUARD_EFFICACY_DIR or ../shared/efficacy found from the working directory up")
	repo := flag.String("repo", ".", "the repository root")
	out := flag.String("o", "evaluator/promptattack/weights.bin.gz", "where to write the weights")
	part := flag.String("report", "validate", "the part to report on: validate, calibrate or train (or none)")
	o := training.Defaults
	flag.IntVar(&o.Epochs, "epochs", o.Epochs, "training epochs (experiments only: the shipped weights use the defaults)")
	flag.Float64Var(&o.LearningRate, "lr", o.LearningRate, "learning rate (experiments only)")
	flag.Float64Var(&o.L2, "l2", o.L2, "L2 penalty (experiments only)")
	flag.Float64Var(&o.PositiveWeight, "posw", o.PositiveWeight, "cap of the attack examples' weight (experiments only)")
	debug := flag.Int("top", 0, "also print the n highest-scoring ordinary texts of the report's part per head")
	flag.Parse()
	if *shared == "" {
		*shared = training.FindShared(*repo)
	}
	if *shared == "" {
		fmt.Fprintln(os.Stderr, "train: no shared efficacy directory (../shared/efficacy); give -shared")
		os.Exit(2)
	}
	m, items, err := training.Build(*shared, *repo, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "train:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(*out, model.Compress(model.Marshal(m)), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "train:", err)
		os.Exit(1)
	}
	fmt.Print(m.Info)
	for _, p := range m.Points {
		fmt.Printf("point %s: logits %.3f\n", p.Name, p.Logit)
	}
	parts := map[string]training.Part{"train": training.Train, "calibrate": training.Calibrate, "validate": training.Validate}
	if p, ok := parts[*part]; ok {
		training.WriteReport(os.Stdout, training.Measures(m, items, p))
		if *debug > 0 {
			training.WriteTop(os.Stdout, m, items, p, *debug)
		}
	}
}
