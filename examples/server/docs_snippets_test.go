package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// Every Go block of the README and docs/ is type-checked against the packages it uses, so a snippet that
// no longer compiles (a function that now returns two values, a renamed option) fails here rather than in a
// reader's editor. A block is a whole file (it starts with `package`), a list of imports, or statements; the
// statements are checked as the body of `func snippet(PARAMS) error`, where PARAMS are the names the
// fragment takes as given, declared in an HTML comment on the line before the fence:
//
//	<!-- snippet: ctx context.Context, prompt string | func callModel(context.Context, string) (string, error) -->
//
// (after `|`, top-level declarations the fragment assumes). Imports are added for the package names the
// fragment uses. "Declared and not used" and other soft errors are ignored: a fragment shows a use, not a
// program.

// snippetImports maps the package names that docs use to their import paths.
var snippetImports = map[string]string{
	"guard": "github.com/guardrail-control/guard", "client": "github.com/guardrail-control/guard/client",
	"evaluator":   "github.com/guardrail-control/guard/evaluator",
	"mcpgateway":  "github.com/guardrail-control/guard/client/mcpgateway",
	"openaiguard": "github.com/guardrail-control/guard/client/openaiguard",
	"server":      "github.com/guardrail-control/guard/server",
	"templates":   "github.com/guardrail-control/guard/templates",
	"openai":      "github.com/openai/openai-go/v3", "option": "github.com/openai/openai-go/v3/option",
	"anthropic": "github.com/anthropics/anthropic-sdk-go/v2", "anthropicoption": "github.com/anthropics/anthropic-sdk-go/v2/option",
	"otel": "go.opentelemetry.io/otel", "mcp": "github.com/modelcontextprotocol/go-sdk/mcp",
	"context": "context", "errors": "errors", "fmt": "fmt", "log": "log", "os": "os", "exec": "os/exec",
	"trace": "go.opentelemetry.io/otel/trace", "time": "time", "json": "encoding/json", "http": "net/http", "strings": "strings", "slog": "log/slog",
}

// docSnippet is one Go block of a Markdown file.
type docSnippet struct {
	where        string // file:line of the fence
	code         string
	params, decl string // from the snippet comment
}

func readDocSnippets(t *testing.T) []docSnippet {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	files = append(files, filepath.Join(repoRoot, "README.md"))
	comment := regexp.MustCompile(`^<!--\s*snippet:(.*?)(?:\|(.*))?-->\s*$`)
	var out []docSnippet
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		var prev string
		var cur *docSnippet
		for n := 1; sc.Scan(); n++ {
			line := sc.Text()
			switch {
			case cur == nil && strings.TrimSpace(line) == "```go":
				cur = &docSnippet{where: fmt.Sprintf("%s:%d", filepath.Base(f), n)}
				if m := comment.FindStringSubmatch(strings.TrimSpace(prev)); m != nil {
					cur.params, cur.decl = strings.TrimSpace(m[1]), strings.TrimSpace(m[2])
				}
			case cur != nil && strings.TrimSpace(line) == "```":
				out = append(out, *cur)
				cur = nil
			case cur != nil:
				cur.code += line + "\n"
			}
			prev = line
		}
	}
	return out
}

// snippetFile turns a snippet into a Go file.
func snippetFile(s docSnippet) string {
	code := strings.TrimSpace(s.code)
	pkgClause := "package snippet"
	if strings.HasPrefix(code, "package ") {
		// A whole file: its package clause, the imports it needs, then the file.
		pkgClause, code, _ = strings.Cut(code, "\n")
		code = "\n" + code
	}
	// Leading import declarations stay at the top; the rest is the body.
	var imports []string
	for strings.HasPrefix(code, "import") {
		end := strings.IndexByte(code, '\n')
		if strings.HasPrefix(code, "import (") {
			end = strings.Index(code, "\n)") + 2
		}
		if end < 0 {
			end = len(code)
		}
		imports = append(imports, code[:end])
		code = strings.TrimSpace(code[end:])
	}
	var b strings.Builder
	b.WriteString(pkgClause + "\n\n")
	for _, imp := range imports {
		b.WriteString(imp + "\n")
	}
	used := map[string]bool{}
	for _, name := range regexp.MustCompile(`\b([a-z][a-z0-9]*)\.[A-Za-z]`).FindAllStringSubmatch(code+" "+s.params+" "+s.decl, -1) {
		used[name[1]] = true
	}
	names := make([]string, 0, len(used))
	for n := range used {
		if _, ok := snippetImports[n]; ok && !strings.Contains(strings.Join(imports, "\n"), `"`+snippetImports[n]+`"`) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "import %s %q\n", n, snippetImports[n])
	}
	b.WriteString(s.decl + "\n")
	if pkgClause != "package snippet" {
		return b.String() + code + "\n"
	}
	if code != "" {
		fmt.Fprintf(&b, "func snippet(%s) error {\n%s\nreturn nil\n}\n", s.params, code)
	}
	return b.String()
}

// exportData is the compiler's export data of every package the snippets import, by import path (go list
// -export builds what the build cache lacks).
func exportData(t *testing.T, paths []string) map[string]string {
	t.Helper()
	args := append([]string{"list", "-export", "-deps", "-json=ImportPath,Export"}, paths...)
	cmd := exec.Command("go", args...)
	cmd.Dir = repoRoot
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -export: %v\n%s", err, stderr.String())
	}
	files := map[string]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct{ ImportPath, Export string }
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		files[p.ImportPath] = p.Export
	}
	return files
}

func TestDocsGoSnippetsCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: type-checking the docs' Go snippets builds the export data of the packages they use")
	}
	snippets := readDocSnippets(t)
	if len(snippets) < 8 {
		t.Fatalf("found %d Go snippets in the docs; the reader is broken", len(snippets))
	}
	fset := token.NewFileSet()
	type parsed struct {
		s    docSnippet
		file *ast.File
	}
	var all []parsed
	pathSet := map[string]bool{}
	for _, s := range snippets {
		src := snippetFile(s)
		f, err := parser.ParseFile(fset, s.where, src, parser.ParseComments)
		if err != nil {
			t.Errorf("%s: does not parse: %v\n%s", s.where, err, src)
			continue
		}
		for _, imp := range f.Imports {
			pathSet[strings.Trim(imp.Path.Value, `"`)] = true
		}
		all = append(all, parsed{s, f})
	}
	paths := make([]string, 0, len(pathSet))
	for p := range pathSet {
		if ours(p) {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	exports := exportData(t, paths)
	gc := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := exports[path]
		if !ok || f == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(f)
	})
	// A package outside the standard library and the module's requirements (a reader's own evaluator package,
	// imported for its side effect) is an empty package: using anything of it is then an error.
	imp := importerFunc(func(path string) (*types.Package, error) {
		if !ours(path) {
			pkg := types.NewPackage(path, filepath.Base(path))
			pkg.MarkComplete()
			return pkg, nil
		}
		return gc.Import(path)
	})
	for _, p := range all {
		var hard []string
		conf := types.Config{Importer: imp, Error: func(err error) {
			if te, ok := err.(types.Error); ok && te.Soft {
				return
			}
			hard = append(hard, err.Error())
		}}
		_, _ = conf.Check("snippet", fset, []*ast.File{p.file}, nil)
		if len(hard) > 0 {
			t.Errorf("%s: the Go snippet does not compile:\n  %s\n(declare what it takes as given in a <!-- snippet: ... --> comment before the fence)",
				p.s.where, strings.Join(hard, "\n  "))
		}
	}
}

type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }

// ours reports whether path is of the standard library or of a module go.mod requires.
func ours(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	if !strings.Contains(first, ".") {
		return true
	}
	gomod, err := os.ReadFile(filepath.Join(repoRoot, "go.mod"))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(gomod), "\n") {
		f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "require "))
		if len(f) >= 2 && (path == f[0] || strings.HasPrefix(path, f[0]+"/")) {
			return true
		}
		if len(f) >= 1 && f[0] == "module" && len(f) == 2 && (path == f[1] || strings.HasPrefix(path, f[1]+"/")) {
			return true
		}
	}
	return false
}
