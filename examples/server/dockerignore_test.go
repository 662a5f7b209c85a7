package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// The Docker build context is the repository minus .dockerignore. These tests keep it to what the
// Dockerfile's build reads: every source and embedded file of ./examples/server is in it, and no compiled
// program (a binary built at the repository root once went into every image build, 8.5 MB).

// dockerignore reads the patterns of .dockerignore (no "!" exceptions: the matcher below does not
// implement them).
func dockerignore(t *testing.T) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(repoRoot, ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var pats []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		p := strings.TrimSpace(sc.Text())
		if p == "" || strings.HasPrefix(p, "#") {
			continue
		}
		if strings.HasPrefix(p, "!") {
			t.Fatalf(".dockerignore: exception %q: the test's matcher does not implement exceptions", p)
		}
		pats = append(pats, strings.TrimSuffix(strings.TrimPrefix(p, "/"), "/"))
	}
	return pats
}

// ignored reports whether rel (slash-separated, relative to the repository root) is left out of the
// build context: a pattern matches it or one of its parent directories, as Docker matches patterns
// (path.Match from the context root).
func ignored(pats []string, rel string) bool {
	for p := rel; p != "." && p != "/" && p != ""; p = path.Dir(p) {
		for _, pat := range pats {
			if ok, _ := path.Match(pat, p); ok {
				return true
			}
		}
	}
	return false
}

// TestDockerignoreKeepsBuildInputs checks that no file the Dockerfile's go build reads (the Go, cgo and
// embedded files of every package of this module that ./examples/server imports, and go.mod, go.sum) is
// left out of the build context.
func TestDockerignoreKeepsBuildInputs(t *testing.T) {
	pats := dockerignore(t)
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "list", "-deps", "-json=Dir,GoFiles,CgoFiles,CFiles,HFiles,EmbedFiles,Module", "./examples/server")
	cmd.Dir = root // the test runs in examples/server; the path is the module's
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	inputs := []string{"go.mod", "go.sum"}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			Dir                                           string
			GoFiles, CgoFiles, CFiles, HFiles, EmbedFiles []string
			Module                                        *struct{ Main bool }
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if p.Module == nil || !p.Module.Main {
			continue
		}
		dir, err := filepath.Rel(root, p.Dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range [][]string{p.GoFiles, p.CgoFiles, p.CFiles, p.HFiles, p.EmbedFiles} {
			for _, f := range l {
				inputs = append(inputs, filepath.ToSlash(filepath.Join(dir, f)))
			}
		}
	}
	if len(inputs) < 50 {
		t.Fatalf("go list found only %d build inputs", len(inputs))
	}
	for _, f := range inputs {
		if ignored(pats, f) {
			t.Errorf(".dockerignore leaves out %s, which the Docker build of ./examples/server reads", f)
		}
	}
}

// TestDockerContextHoldsNoProgram walks the build context (the repository minus .dockerignore) and the
// files git tracks, and fails on a compiled program in either.
func TestDockerContextHoldsNoProgram(t *testing.T) {
	pats := dockerignore(t)
	for _, p := range []string{"embedded", "agent", "guard", "mcpserver", "x.test", "cpu.prof", "guard.db"} {
		if !ignored(pats, p) {
			t.Errorf(".dockerignore does not leave out %s", p)
		}
	}
	err := filepath.WalkDir(repoRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(repoRoot, p)
		rel = filepath.ToSlash(rel)
		if rel != "." && ignored(pats, rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() && isProgram(p) {
			t.Errorf("%s is a compiled program in the Docker build context: delete it or add it to .dockerignore", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("git", "-C", repoRoot, "ls-files", "-z").Output()
	if err != nil {
		t.Logf("git ls-files: %v (tracked files not checked)", err)
		return
	}
	for _, f := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if f != "" && isProgram(filepath.Join(repoRoot, f)) {
			t.Errorf("%s is a compiled program tracked by git", f)
		}
	}
}

// isProgram reports whether the file at p starts like an executable (ELF, Mach-O, PE).
func isProgram(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false // a tracked file deleted in the work tree
	}
	defer f.Close()
	var head [4]byte
	if n, _ := io.ReadFull(f, head[:]); n < 4 {
		return false
	}
	switch {
	case bytes.Equal(head[:], []byte("\x7fELF")),
		bytes.Equal(head[:], []byte{0xcf, 0xfa, 0xed, 0xfe}), bytes.Equal(head[:], []byte{0xfe, 0xed, 0xfa, 0xcf}),
		bytes.Equal(head[:2], []byte("MZ")):
		return true
	}
	return false
}
