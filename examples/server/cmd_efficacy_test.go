package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEfficacyCommand: guard efficacy measures a template on the corpora of -dir and on the built-in
// cases, prints the table, the floors format or the JSON report, and refuses a bad -o.
func TestEfficacyCommand(t *testing.T) {
	dir := t.TempDir()
	corpus := `{"text": "admin' OR 1=1 --"}` + "\n" + `{"text": "1 UNION SELECT NULL,NULL--"}` + "\n" + `{"text": "just a name"}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, "attack_sqli.jsonl"), []byte(corpus), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runPolicyCmd(t, nil, "efficacy", "-dir", dir, "-template", "sql-injection")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"attack_sqli", "66.7% recall", "own/attack_sqli", "own/benign_sql", "RECALL"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "command-injection") {
		t.Errorf("-template did not narrow the run:\n%s", out)
	}

	code, out, _ = runPolicyCmd(t, nil, "efficacy", "-dir", dir, "-template", "sql-injection", "-o", "floors")
	var floors map[string]float64
	if code != 0 || json.Unmarshal([]byte(out), &floors) != nil || floors["sql-injection|attack_sqli|attack"] != 0.666 {
		t.Fatalf("floors: exit %d, %s", code, out)
	}

	code, out, _ = runPolicyCmd(t, map[string]string{"GUARD_EFFICACY_DIR": dir}, "efficacy", "-template", "sql-injection", "-o", "json", "-misses")
	if code != 0 || !strings.Contains(out, `MISS sql-injection attack_sqli "just a name"`) {
		t.Fatalf("misses: exit %d, %s", code, out)
	}

	if code, _, stderr := runPolicyCmd(t, nil, "efficacy", "-o", "yaml"); code != 1 || !strings.Contains(stderr, "-o must be") {
		t.Errorf("bad -o: exit %d, %s", code, stderr)
	}
}
