package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/guardrail-control/guard/client"
)

func init() {
	register(&command{name: "keys", summary: "list, create, rotate and revoke API keys while the service runs",
		usage: keysUsage, run: runKeys, env: remoteEnv})
}

const keysUsage = "guard keys list | create NAME --role admin|runtime|approve|read [--agents A,B] [--expires-in 720h] | rotate NAME | revoke NAME  [--server URL]"

// runKeys is `guard keys` (docs/operations.md, "Keys at runtime"). It needs an admin key not limited to
// agents in GUARD_API_KEY. A new or rotated secret is printed once, alone on stdout, so that
// `KEY=$(guard keys create ...)` keeps it; everything else goes to stderr.
func runKeys(ctx context.Context, env *commandEnv, args []string) error {
	fs := flag.NewFlagSet("keys", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	role := fs.String("role", "", "create: admin, runtime, approve or read")
	agents := fs.String("agents", "", "create: the agents the key is limited to, comma-separated (names or patterns such as team-*); empty: every agent")
	expiresIn := fs.String("expires-in", "", "create: the key expires after this long (a Go duration: 720h, 90m)")
	var rf remoteFlags
	rf.register(fs)
	pos, err := parsePolicyFlags(fs, keysUsage, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usageFail(fs, "say what to do: list, create, rotate or revoke")
	}
	verb, rest := pos[0], pos[1:]
	switch {
	case verb == "list" && len(rest) == 0:
	case verb == "list":
		return usageFail(fs, "list takes no argument")
	case verb == "create" || verb == "rotate" || verb == "revoke":
		if len(rest) != 1 {
			return usageFail(fs, verb+" needs one key name")
		}
	default:
		return usageFail(fs, fmt.Sprintf("unknown action %q: list, create, rotate or revoke", verb))
	}
	if verb != "create" && (*role != "" || *agents != "" || *expiresIn != "") {
		return usageFail(fs, "--role, --agents and --expires-in go with create")
	}
	if verb == "create" && *role == "" {
		return usageFail(fs, "create needs --role admin, runtime, approve or read")
	}
	rm, err := rf.connect(env, true)
	if err != nil {
		return err
	}
	switch verb {
	case "list":
		keys, err := rm.api.ListKeys(ctx)
		if err != nil {
			return rm.explain(err)
		}
		tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tROLE\tAGENTS\tSOURCE\tSTATUS\tEXPIRES\tLAST USED")
		for _, k := range keys {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", k.Name, k.Role, agentsText(k.Agents), k.Source, k.Status, timeText(k.ExpiresAt), timeText(k.LastUsedAt))
		}
		return tw.Flush()
	case "create":
		nk := client.NewAPIKey{Name: rest[0], Role: *role, ExpiresIn: *expiresIn}
		for _, a := range strings.Split(*agents, ",") {
			if a = strings.TrimSpace(a); a != "" {
				nk.Agents = append(nk.Agents, a)
			}
		}
		k, err := rm.api.CreateKey(ctx, nk)
		if err != nil {
			return rm.explain(err)
		}
		fmt.Fprintf(env.stderr, "key %s created (role %s, agents %s, expires %s); its secret is shown once:\n", k.Name, k.Role, agentsText(k.Agents), timeText(k.ExpiresAt))
		fmt.Fprintln(env.stdout, k.Key)
	case "rotate":
		k, err := rm.api.RotateKey(ctx, rest[0])
		if err != nil {
			return rm.explain(err)
		}
		fmt.Fprintf(env.stderr, "key %s rotated: the old secret is refused from now on; the new one is shown once:\n", k.Name)
		fmt.Fprintln(env.stdout, k.Key)
	case "revoke":
		k, err := rm.api.RevokeKey(ctx, rest[0])
		if err != nil {
			return rm.explain(err)
		}
		fmt.Fprintf(env.stdout, "key %s revoked at %s\n", k.Name, timeText(k.RevokedAt))
	}
	return nil
}

func agentsText(agents []string) string {
	if len(agents) == 0 {
		return "*"
	}
	return strings.Join(agents, ",")
}

func timeText(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}
