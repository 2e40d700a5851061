package config

import (
	"os"
	"strings"
	"testing"
)

// The launch policy's table in docs/configuration.md sits between these
// markers; TestLaunchPolicyDocs keeps it equal to launchRules (go test
// -run TestLaunchPolicyDocs -update rewrites it).
const (
	policyDocsFile  = "../../docs/configuration.md"
	policyDocsBegin = "<!-- launch-policy table: generated from internal/config/launchpolicy.go; go test ./internal/config -run TestLaunchPolicyDocs -update -->\n"
	policyDocsEnd   = "<!-- end of the launch-policy table -->\n"
)

// renderLaunchPolicy renders launchRules as the documentation's table:
// one row per rule, in table order.
func renderLaunchPolicy() string {
	var b strings.Builder
	b.WriteString("| Launcher | What | Verdict | Allow with | Why |\n|---|---|---|---|---|\n")
	for _, r := range launchRules {
		if r.why == "" {
			continue // the same rule in another scope; its first row says it
		}
		verdict, allow := "allowed", "—"
		switch {
		case r.id == "":
		case r.kind == ruleEnv:
			verdict, allow = "refused", "`env.NAME`"
		default:
			verdict, allow = "refused", "`"+r.id+"`"
		}
		launcher := strings.Join(r.launchers, ", ")
		if r.kind == ruleEnv || r.kind == ruleField {
			launcher = "env of " + launcher
		}
		cells := []string{launcher, describeRule(r), verdict, allow, r.why}
		for i, c := range cells {
			cells[i] = strings.ReplaceAll(c, "|", `\|`)
		}
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	return b.String()
}

// describeRule is the "What" cell of a rule.
func describeRule(r *launchRule) string {
	switch r.kind {
	case ruleOption, ruleGlobal, ruleEnv, ruleField:
		names := make([]string, len(r.opts))
		for i, o := range r.opts {
			names[i] = "`" + strings.TrimSuffix(o, "=") + "`"
		}
		s := strings.Join(names, ", ")
		if r.kind == ruleGlobal {
			s += " (before the subcommand)"
		}
		if r.values != "" {
			s += " " + r.values
		}
		return s
	}
	return r.values
}

// TestLaunchPolicyDocs: the table in docs/configuration.md is the table
// the checker walks.
func TestLaunchPolicyDocs(t *testing.T) {
	data, err := os.ReadFile(policyDocsFile)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	begin, end := strings.Index(doc, policyDocsBegin), strings.Index(doc, policyDocsEnd)
	if begin < 0 || end < begin {
		t.Fatalf("%s has no launch-policy table between %q and %q", policyDocsFile, policyDocsBegin, policyDocsEnd)
	}
	got := doc[begin+len(policyDocsBegin) : end]
	want := renderLaunchPolicy()
	if got == want {
		return
	}
	if *Update {
		doc = doc[:begin+len(policyDocsBegin)] + want + doc[end:]
		if err := os.WriteFile(policyDocsFile, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	gotRows, wantRows := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < max(len(gotRows), len(wantRows)); i++ {
		var g, w string
		if i < len(gotRows) {
			g = gotRows[i]
		}
		if i < len(wantRows) {
			w = wantRows[i]
		}
		if g != w {
			t.Errorf("row %d of the documented launch policy differs from the code's:\ndocs: %s\ncode: %s", i+1, g, w)
		}
	}
	t.Error("run go test ./internal/config -run TestLaunchPolicyDocs -update to rewrite the table from the code")
}

// TestLaunchRulesWellFormed: every refused construct says why and how to
// do without it; an option takes a value in every rule or in none; a rule
// split over scopes keeps its reason in its first row.
func TestLaunchRulesWellFormed(t *testing.T) {
	for _, r := range launchRules {
		why, fix := r.reason()
		if why == "" || r.id != "" && fix == "" {
			t.Errorf("rule %q (%v %v): why %q, fix %q; want both", r.id, r.launchers, r.opts, why, fix)
		}
		if r.id == "" && r.refuses != nil {
			t.Errorf("an allowed row (%v %v) has a refuses function", r.launchers, r.opts)
		}
		if strings.ContainsAny(why, "\n") {
			t.Errorf("rule %q: the reason is not one line", r.id)
		}
		if (r.kind == ruleOption || r.kind == ruleGlobal || r.kind == ruleEnv || r.kind == ruleField) && len(r.opts) == 0 {
			t.Errorf("rule %q names no option or variable", r.id)
		}
		if r.id != "" && !validAllowName(r.id) && r.kind != ruleEnv {
			t.Errorf("rule %q cannot be named under launch.allow", r.id)
		}
	}
	valued := map[string]bool{}
	for _, r := range launchRules {
		if r.kind != ruleOption && r.kind != ruleGlobal {
			continue
		}
		for _, l := range r.launchers {
			for _, o := range r.opts {
				name, v := strings.CutSuffix(o, "=")
				key := l + " " + name
				if r.kind == ruleGlobal {
					key += " (global)"
				}
				if prev, seen := valued[key]; seen && prev != v {
					t.Errorf("%s takes a value in one rule and not in another", key)
				}
				valued[key] = v
			}
		}
	}
	for _, n := range []string{"docker.privileged", "env.LD_PRELOAD", "env.npm_config_registry", "env.inherit", "uvx.with", "npx.call"} {
		if !validAllowName(n) {
			t.Errorf("validAllowName(%q) = false, want true", n)
		}
	}
	for _, n := range []string{"", "docker", "env.", "env.loader", "env.PATHX", "docker.option2", "env.LD_*"} {
		if validAllowName(n) {
			t.Errorf("validAllowName(%q) = true, want false", n)
		}
	}
}
