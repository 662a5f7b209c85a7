package main

import (
	"bytes"
	"os"
	"testing"
)

// TestCommittedFilesAreFresh fails when the committed rule file or the rules' example corpora differ from a
// fresh generation from the pinned gitleaks module: someone edited a generated file, or changed the
// generator or the pin without running `go generate ./evaluator/secrets`.
func TestCommittedFilesAreFresh(t *testing.T) {
	rules, err := buildRules()
	if err != nil {
		t.Fatal(err)
	}
	c, err := buildCases(rules)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct {
		path string
		want []byte
	}{
		{defaultRules, rules},
		{defaultTPs, c.truePositives},
		{defaultFPs, c.falsePositives},
	} {
		got, err := os.ReadFile(f.path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, f.want) {
			t.Errorf("%s differs from a fresh generation from %s: run `go generate ./evaluator/secrets` and commit the result", f.path, gitleaksModule)
		}
	}
}

// TestGroupsAreKnown keeps the group table in step with the evaluator's documented groups.
func TestGroupsAreKnown(t *testing.T) {
	known := map[string]bool{"cloud": true, "vcs": true, "chat": true, "private_key": true, "jwt": true, "ai": true,
		"payment": true, "package": true, "service": true, "generic": true}
	for _, g := range groups {
		if !known[g.group] {
			t.Errorf("prefix %q: unknown group %q", g.prefix, g.group)
		}
	}
	for id, want := range map[string]string{"aws-access-token": "cloud", "aws-amazon-bedrock-api-key-long-lived": "ai",
		"square-access-token": "payment", "squarespace-access-token": "service", "jwt-base64": "jwt", "generic-api-key": "generic"} {
		if got := groupOf(id); got != want {
			t.Errorf("groupOf(%s) = %s, want %s", id, got, want)
		}
	}
}
