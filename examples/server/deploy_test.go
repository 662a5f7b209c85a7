package main

import (
	"bufio"
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/guardrail-control/guard/server"
	"github.com/guardrail-control/guard/server/observability"
	"github.com/guardrail-control/guard/store/storetest"
)

// The deploy files (Dockerfile, deploy/kubernetes.yaml, deploy/guard.service, deploy/guard.env.example)
// are checked against the server here: every environment variable they set is one the server reads,
// every probe path answers 200 without a key on a real server with authentication on, every port agrees
// with PORT, every command and flag exists. Docker does not run on CI machines; the Dockerfile's go build
// line runs here instead.

const repoRoot = "../.."

// configNames is every variable name of the config table, aliases included.
func configNames() map[string]bool {
	names := map[string]bool{}
	for _, ev := range envVars {
		names[ev.name] = true
		for _, a := range ev.aliases {
			names[a] = true
		}
	}
	return names
}

// checkEnvName fails the test when name is not a variable the server reads.
func checkEnvName(t *testing.T, where, name string) {
	t.Helper()
	if !configNames()[name] {
		t.Errorf("%s sets %s, which the server does not read (config.go's envVars)", where, name)
	}
}

// checkCommand fails the test when args is not a registered command with flags it accepts.
func checkCommand(t *testing.T, where string, args []string) {
	t.Helper()
	if len(args) == 0 || commands[args[0]] == nil {
		t.Errorf("%s runs %v: not a guard command (%v)", where, args, commandNames())
		return
	}
	help, _, _ := runInProcess(t, nil, "help", args[0])
	for _, a := range args[1:] {
		if flagName := strings.TrimLeft(a, "-"); strings.HasPrefix(a, "-") && !strings.Contains(help, "-"+strings.SplitN(flagName, "=", 2)[0]) {
			t.Errorf("%s: guard %s has no flag %s", where, args[0], a)
		}
	}
}

// probeServer is the real server with authentication on and metrics, as deployed; probes must pass
// without a key. It skips without SQLite (a CGO_ENABLED=0 test binary).
func probeServer(t *testing.T) *httptest.Server {
	t.Helper()
	m, err := observability.NewMetrics("guard")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(storetest.SQLite(t), server.WithAuth(true, []string{"r"}, []string{"a"}), server.WithMetrics(m))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return hs
}

func checkProbe(t *testing.T, hs *httptest.Server, where, path string) {
	t.Helper()
	res, err := http.Get(hs.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Errorf("%s probes %s: %d without a key, want 200", where, path, res.StatusCode)
	}
}

// dockerfile is what the test reads of the Dockerfile: the last stage's settings and every RUN line.
type dockerfile struct {
	env                   map[string]string
	args                  map[string]string // ARG defaults
	expose                []string
	user, healthcheck     string
	volumes               []string
	entrypoint, cmd, runs []string
}

func parseDockerfile(t *testing.T, path string) dockerfile {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d := dockerfile{args: map[string]string{}}
	var logical []string
	var cur strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "#") || (line == "" && cur.Len() == 0) {
			continue
		}
		if strings.HasSuffix(line, "\\") {
			cur.WriteString(strings.TrimSuffix(line, "\\") + " ")
			continue
		}
		cur.WriteString(line)
		logical = append(logical, cur.String())
		cur.Reset()
	}
	jsonArray := func(s string) []string {
		var out []string
		if err := yaml.Unmarshal([]byte(s), &out); err != nil {
			t.Fatalf("Dockerfile: %q is not an exec-form array: %v", s, err)
		}
		return out
	}
	for _, l := range logical {
		instr, rest, _ := strings.Cut(l, " ")
		rest = strings.TrimSpace(rest)
		switch strings.ToUpper(instr) {
		case "FROM": // a new stage: only the last one's runtime settings count
			d.env, d.expose, d.user, d.healthcheck, d.volumes, d.entrypoint, d.cmd = map[string]string{}, nil, "", "", nil, nil, nil
		case "ARG":
			k, v, _ := strings.Cut(rest, "=")
			d.args[k] = v
		case "ENV":
			for _, kv := range strings.Fields(rest) {
				k, v, _ := strings.Cut(kv, "=")
				d.env[k] = v
			}
		case "EXPOSE":
			d.expose = strings.Fields(rest)
		case "USER":
			d.user = rest
		case "VOLUME":
			d.volumes = jsonArray(rest)
		case "HEALTHCHECK":
			d.healthcheck = rest
		case "ENTRYPOINT":
			d.entrypoint = jsonArray(rest)
		case "CMD":
			d.cmd = jsonArray(rest)
		case "RUN":
			d.runs = append(d.runs, rest)
		}
	}
	return d
}

func TestDeployDockerfile(t *testing.T) {
	d := parseDockerfile(t, filepath.Join(repoRoot, "Dockerfile"))
	for k := range d.env {
		checkEnvName(t, "Dockerfile ENV", k)
	}
	if d.env["HOST"] != "0.0.0.0" {
		t.Errorf("Dockerfile: HOST=%q, want 0.0.0.0 (a container must listen beyond its loopback)", d.env["HOST"])
	}
	if len(d.expose) != 1 || d.expose[0] != d.env["PORT"] {
		t.Errorf("Dockerfile: EXPOSE %v, PORT=%s", d.expose, d.env["PORT"])
	}
	if u := strings.SplitN(d.user, ":", 2)[0]; u == "" || u == "root" || u == "0" {
		t.Errorf("Dockerfile: USER %q, want a non-root user", d.user)
	}
	if dir := filepath.Dir(d.env["DATABASE_URL"]); len(d.volumes) != 1 || d.volumes[0] != dir {
		t.Errorf("Dockerfile: VOLUME %v does not hold the SQLite file %s", d.volumes, d.env["DATABASE_URL"])
	}
	if len(d.entrypoint) != 1 || d.entrypoint[0] != "guard" {
		t.Errorf("Dockerfile: ENTRYPOINT %v, want [guard]", d.entrypoint)
	}
	checkCommand(t, "Dockerfile CMD", d.cmd)
	m := regexp.MustCompile(`http://127\.0\.0\.1:\$\{PORT\}(/[A-Za-z0-9/_-]*)`).FindStringSubmatch(d.healthcheck)
	if m == nil || m[1] != "/ready" {
		t.Fatalf("Dockerfile: HEALTHCHECK %q does not probe /ready on ${PORT}", d.healthcheck)
	}
	checkProbe(t, probeServer(t), "Dockerfile HEALTHCHECK", m[1])
}

// TestDeployDockerfileBuild runs the Dockerfile's go build line (the only step Docker would run that CI
// can) with its ARG defaults, and the version check that follows it.
func TestDeployDockerfileBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary like the Dockerfile does")
	}
	if os.Getenv("CGO_ENABLED") == "0" {
		t.Skip("the Dockerfile builds with cgo")
	}
	d := parseDockerfile(t, filepath.Join(repoRoot, "Dockerfile"))
	out := t.TempDir()
	var build string
	for _, r := range d.runs {
		if strings.Contains(r, "go build") {
			build = r
		}
	}
	if build == "" || !strings.Contains(build, "CGO_ENABLED=1") || !strings.Contains(build, "-o /out/guard ./examples/server") {
		t.Fatalf("Dockerfile: no cgo go build of ./examples/server into /out/guard: %q", build)
	}
	for k, v := range d.args {
		build = strings.ReplaceAll(build, "${"+k+"}", v)
	}
	build = strings.ReplaceAll(build, "/out/", out+"/")
	ctx, cancel := context.WithTimeout(context.Background(), 10*60e9)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", build)
	cmd.Dir = repoRoot
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", build, err, b)
	}
	got, err := exec.Command(filepath.Join(out, "guard"), "version").CombinedOutput()
	if err != nil || !strings.Contains(string(got), "guard "+d.args["VERSION"]) || !strings.Contains(string(got), "commit:     "+d.args["COMMIT"]) ||
		!strings.Contains(string(got), "build tags: cgo") {
		t.Fatalf("guard version of the Dockerfile build: %v\n%s", err, got)
	}
}

func TestDeploySystemd(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot, "deploy", "guard.service"))
	if err != nil {
		t.Fatal(err)
	}
	var execs int
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
		if !ok || strings.HasPrefix(k, "#") {
			continue
		}
		switch k {
		case "Environment":
			name, _, _ := strings.Cut(v, "=")
			checkEnvName(t, "guard.service", name)
		case "ExecStart", "ExecStartPre":
			f := strings.Fields(v)
			if len(f) == 0 || filepath.Base(f[0]) != "guard" {
				t.Errorf("guard.service %s=%s does not run guard", k, v)
				continue
			}
			checkCommand(t, "guard.service "+k, f[1:])
			execs++
		}
	}
	if execs != 2 {
		t.Errorf("guard.service: %d guard commands, want ExecStartPre (migrate) and ExecStart (serve)", execs)
	}
	// The sandboxing, as systemd rates it, when systemd-analyze is there (the install steps' mkdir too).
	// Documentation= must resolve once the header's steps ran: each file:// target is installed by one of them.
	for _, m := range regexp.MustCompile(`(?m)^Documentation=(.*)$`).FindAllStringSubmatch(string(b), -1) {
		for _, doc := range strings.Fields(m[1]) {
			path, ok := strings.CutPrefix(doc, "file://")
			if !ok {
				continue
			}
			step := regexp.MustCompile(`(?m)^#\s+sudo install -D -m 0644 (\S+) ` + regexp.QuoteMeta(path) + `\b`).FindStringSubmatch(string(b))
			if step == nil {
				t.Errorf("guard.service: Documentation=%s, which no install step of its header installs", doc)
			} else if _, err := os.Stat(filepath.Join(repoRoot, step[1])); err != nil {
				t.Errorf("guard.service installs %s as its documentation: %v", step[1], err)
			}
		}
	}
	if !strings.Contains(string(b), "install -d -m 0755 /etc/guard") {
		t.Error("guard.service's install steps do not create /etc/guard before installing guard.env into it")
	}
	if sa, err := exec.LookPath("systemd-analyze"); err == nil {
		unit := filepath.Join(t.TempDir(), "guard.service")
		if err := os.WriteFile(unit, b, 0o644); err != nil {
			t.Fatal(err)
		}
		out, _ := exec.Command(sa, "security", "--offline=yes", unit).CombinedOutput()
		m := regexp.MustCompile(`Overall exposure level for guard.service: ([0-9.]+)`).FindSubmatch(out)
		if m == nil {
			t.Logf("systemd-analyze gave no exposure level (too old for --offline?):\n%s", out)
		} else if v, _ := strconv.ParseFloat(string(m[1]), 64); v > 2.0 {
			t.Errorf("systemd-analyze security rates guard.service %s, want at most 2.0 (OK)", m[1])
		}
	}
	env, err := os.ReadFile(filepath.Join(repoRoot, "deploy", "guard.env.example"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(env), "\n") {
		line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "#"))
		if name, _, ok := strings.Cut(line, "="); ok && regexp.MustCompile(`^[A-Z_]+$`).MatchString(name) {
			checkEnvName(t, "guard.env.example", name)
		}
	}
}
