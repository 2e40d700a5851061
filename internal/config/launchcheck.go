package config

import (
	"encoding/csv"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// This file applies the launch policy's table (launchpolicy.go): it reads
// a launcher's arguments as the launcher itself does — npx as npm's npx
// wrapper and nopt, uvx as clap, docker as pflag — and looks each option,
// the package and the environment up in the table.

// refusal is one use of a refused construct.
type refusal struct {
	rule   *launchRule
	name   string // the name launch.allow allows it by
	index  int    // the argument's index; -1 for the environment, or the arguments as a whole
	arg    string // the argument as written, with its value if separate; the variable's name
	detail string // the reason, when it depends on the value; else ""
}

// checker collects the refusals of one launch.
type checker struct {
	p        *LaunchPolicy
	launcher string
	out      []refusal
	// onValue, when set, is told each option's value, the index of the
	// argument that holds it and that argument (uvx --from).
	onValue func(name, value string, index int, arg string)
}

// value hands an option's value to onValue.
func (c *checker) value(name, value string, index int, arg string) {
	if c.onValue != nil {
		c.onValue(name, value, index, arg)
	}
}

// use records a use of a construct against one rule: nothing for a row of
// what is allowed, a value the rule does not refuse, or a name the policy
// allows.
func (c *checker) use(r *launchRule, u ruleUse, index int, arg string) {
	if r.id == "" {
		return
	}
	refused, detail := true, ""
	if r.refuses != nil {
		refused, detail = r.refuses(u)
	}
	if !refused {
		return
	}
	name := r.allowName(arg)
	if c.p.allows(name) {
		return
	}
	c.out = append(c.out, refusal{rule: r, name: name, index: index, arg: arg, detail: detail})
}

// option checks one option against the rules that name it.
func (c *checker) option(rules []*launchRule, u ruleUse, index int, arg string) {
	for _, r := range rules {
		c.use(r, u, index, arg)
	}
}

// unknown records an option the table does not list.
func (c *checker) unknown(index int, arg string) {
	for _, r := range rulesOf(c.launcher, ruleUnknown) {
		c.use(r, ruleUse{p: c.p}, index, arg)
	}
}

// pkg checks the package, tool or image, the argument at index.
func (c *checker) pkg(index int, spec string) {
	c.pkgIn(index, "", spec, spec)
}

// pkgIn checks a package spec that an option gives (uvx --from SPEC), in
// the argument arg at index.
func (c *checker) pkgIn(index int, opt, spec, arg string) {
	for _, r := range rulesOf(c.launcher, rulePackage) {
		c.use(r, ruleUse{opt: opt, value: spec, hasValue: true, p: c.p}, index, arg)
	}
}

// npx reads npx's arguments as npm does, in its two passes. npm's npx
// wrapper (bin/npx-cli.js) finds the package: the first argument that does
// not start with - and that it does not take as the value of the option
// before it (it takes the next argument as a value after any option that
// is not a known flag, when that argument does not start with -), or the
// argument after --. Then npm's option parser (nopt) reads everything
// before the package: any number of leading dashes name the same option,
// an abbreviation is the option, a cluster of letters is each letter's
// option (-yc is -y -c), an option with a value takes the next argument
// whatever it looks like, and an argument it takes as no option's value is
// a package too. So every argument before the package is checked as an
// option if it starts with -, and as a package if not; the arguments after
// the package are its own.
func (c *checker) npx(args []string) {
	ix := optionIndexes()[launcherNpx]
	end, pkgAt := len(args), -1
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			end = i
			if i+1 < len(args) {
				pkgAt = i + 1
			}
			break
		}
		if !strings.HasPrefix(a, "-") {
			end, pkgAt = i, i
			break
		}
		key, _, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !hasVal && i+1 < len(args) && !npxFlags[key] && (npxValueAlways(key) || !strings.HasPrefix(args[i+1], "-")) {
			i++ // the wrapper takes it as the option's value
		}
	}
	valueAt := -1 // the argument npm's parser takes as an option's value
	for i := 0; i < end; i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			if i != valueAt {
				c.pkg(i, a) // to npm's parser, a package
			}
			continue
		}
		key, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		names, ok := npxOptions(key)
		if !ok {
			c.unknown(i, a)
			continue
		}
		if len(names) == 1 && strings.TrimLeft(names[0], "-") != key && !strings.HasPrefix(key, "@") {
			// An abbreviation: the option it stands for is checked, and
			// the abbreviation itself is not one of the known spellings.
			c.unknown(i, a)
		}
		for j, n := range names {
			rules, valued, _ := ix.lookup(n)
			u, arg := ruleUse{opt: n, value: val, hasValue: hasVal, p: c.p}, a
			if valued && !hasVal && j == len(names)-1 && i+1 < end {
				// npm's parser takes the next argument as the value, even
				// when it starts with -; it is also checked on its own.
				u.value, u.hasValue, arg = args[i+1], true, a+" "+args[i+1]
				valueAt = i + 1
			}
			c.option(rules, u, i, arg)
		}
	}
	if pkgAt >= 0 {
		c.pkg(pkgAt, args[pkgAt])
	}
}

// npxFlags are the option names (without dashes) after which npm's npx
// wrapper never takes the next argument as a value: npm's boolean settings
// the table allows, its own flags, and the shorthands whose expansion
// carries its value (-s is --loglevel silent). After any other option, the
// next argument that does not start with - is taken as its value, not as
// the package.
var npxFlags = map[string]bool{
	"y": true, "yes": true, "q": true, "quiet": true, "no-install": true, "prefer-offline": true, "prefer-online": true,
	"offline": true, "ignore-scripts": true, "audit": true, "fund": true, "update-notifier": true, "progress": true,
	"color": true, "legacy-peer-deps": true, "version": true, "v": true, "help": true, "h": true,
	"s": true, "silent": true, "d": true, "dd": true, "ddd": true, "verbose": true,
}

// npxKeys maps an npx option's name without dashes to the table's
// spelling of it.
var npxKeys = sync.OnceValue(func() map[string]string {
	out := map[string]string{}
	for name := range optionIndexes()[launcherNpx].rules {
		out[strings.TrimLeft(name, "-")] = name
	}
	return out
})

// npxOptions resolves an option key (dashes stripped, no value) to the
// table's options: the key itself, an abbreviation of exactly one refused
// long option (npm accepts abbreviations), or a cluster of single letters.
// ok is false for an option the table does not know.
func npxOptions(key string) ([]string, bool) {
	if name, ok := npxKeys()[key]; ok {
		return []string{name}, true
	}
	if _, _, ok := optionIndexes()[launcherNpx].lookup("--" + key); ok && strings.HasPrefix(key, "@") {
		return []string{"--" + key}, true
	}
	var abbrev []string
	for k, name := range npxKeys() {
		if len(key) > 1 && len(k) > len(key) && strings.HasPrefix(k, key) {
			abbrev = append(abbrev, name)
		}
	}
	if len(abbrev) == 1 && refusedOption(launcherNpx, abbrev[0]) {
		return abbrev, true
	}
	if len(key) < 2 {
		return nil, false
	}
	var out []string
	for _, ch := range key {
		name, ok := npxKeys()[string(ch)]
		if !ok {
			return nil, false
		}
		out = append(out, name)
	}
	return out, true
}

// npxValueAlways reports whether npx takes the next argument as the
// option's value even when it starts with - (its own value options).
func npxValueAlways(name string) bool {
	switch strings.TrimLeft(name, "-") {
	case "package", "p", "cache", "userconfig", "call", "c", "shell", "node-arg", "n":
		return true
	}
	return false
}

// refusedOption reports whether any rule refuses some use of an option.
func refusedOption(launcher, name string) bool {
	rules, _, _ := optionIndexes()[launcher].lookup(name)
	return slices.ContainsFunc(rules, func(r *launchRule) bool { return r.id != "" })
}

// uvx reads uvx's arguments as clap does, which for what the policy needs
// reads them as pflag does (see pflag): --long, --long=value, --long
// value, -abc clusters of flags ending in at most one option with a value
// (-p3.12, -p=3.12, -p 3.12); options end at the first other argument (the
// tool), or at --. With --from, the tool is a command name and the
// package is --from's value.
func (c *checker) uvx(args []string) {
	from := false
	c.onValue = func(name, value string, index int, arg string) {
		if name == "--from" {
			from = true
			c.pkgIn(index, name, value, arg)
		}
	}
	if i := c.pflag(optionIndexes()[launcherUvx], args, 0); i < len(args) && !from {
		c.pkg(i, args[i])
	}
}

// docker reads docker's arguments as its CLI (pflag) does: global options,
// the subcommand, then run's options up to the image; --name=value,
// --name value (the next argument, whatever it looks like), and -abc
// clusters of flags ending in at most one option with a value (-v/:/x,
// -v=/:/x, -v /:/x). Only docker run (or container run) is checked
// further; the arguments after the image belong to the container.
func (c *checker) docker(args []string) {
	i := c.pflag(optionIndexes()[launcherDocker+" global"], args, 0)
	switch {
	case i >= len(args):
		return // docker prints its help
	case args[i] == "run":
		i++
	case args[i] == "container" && i+1 < len(args) && args[i+1] == "run":
		i += 2
	case args[i] == "mcp" && len(args) == i+3 && args[i+1] == "gateway" && args[i+2] == "run":
		return
	default:
		c.subcommand(i, args[i])
		return
	}
	if j := c.pflag(optionIndexes()[launcherDocker], args, i); j < len(args) {
		c.pkg(j, args[j])
	}
}

// subcommand records a docker subcommand other than run.
func (c *checker) subcommand(index int, sub string) {
	for _, r := range rulesOf(c.launcher, ruleSubcommand) {
		c.use(r, ruleUse{value: sub, p: c.p}, index, sub)
	}
}

// pflag checks the options of args from start, as pflag reads them, and
// returns the index of the first argument that is not an option (after
// a --, the one after it).
//
// Where an option takes a value, the next argument is its value; if that
// argument looks like an option it is checked as one too, so that a
// wrong idea of what takes a value cannot hide an option. An option the
// table does not know is refused, and the argument after it is taken as
// its possible value.
func (c *checker) pflag(ix *optionIndex, args []string, start int) int {
	i := start
	for i < len(args) {
		a := args[i]
		if a == "--" {
			return i + 1
		}
		if len(a) < 2 || a[0] != '-' {
			return i
		}
		if strings.HasPrefix(a, "--") {
			name, val, hasVal := strings.Cut(a, "=")
			rules, valued, ok := ix.lookup(name)
			switch {
			case !ok:
				c.unknown(i, a)
				i++
				if !hasVal && i < len(args) && !strings.HasPrefix(args[i], "-") {
					i++
				}
			case valued && !hasVal && i+1 < len(args):
				c.option(rules, ruleUse{opt: name, value: args[i+1], hasValue: true, p: c.p}, i, a+" "+args[i+1])
				c.value(name, args[i+1], i+1, args[i+1])
				i = skipValue(args, i)
			default:
				c.option(rules, ruleUse{opt: name, value: val, hasValue: hasVal, p: c.p}, i, a)
				if valued && hasVal {
					c.value(name, val, i, a)
				}
				i++
			}
			continue
		}
		next := i + 1
		for j := 1; j < len(a); j++ {
			name := "-" + string(a[j])
			rules, valued, ok := ix.lookup(name)
			if !ok {
				c.unknown(i, a)
				break
			}
			rest := a[j+1:]
			if !valued {
				if v, isVal := strings.CutPrefix(rest, "="); isVal {
					c.option(rules, ruleUse{opt: name, value: v, hasValue: true, p: c.p}, i, a)
					break
				}
				c.option(rules, ruleUse{opt: name, p: c.p}, i, a)
				continue
			}
			if rest != "" {
				c.option(rules, ruleUse{opt: name, value: strings.TrimPrefix(rest, "="), hasValue: true, p: c.p}, i, a)
				break
			}
			if i+1 < len(args) {
				c.option(rules, ruleUse{opt: name, value: args[i+1], hasValue: true, p: c.p}, i, a+" "+args[i+1])
				next = skipValue(args, i)
			} else {
				c.option(rules, ruleUse{opt: name, p: c.p}, i, a)
			}
			break
		}
		i = next
	}
	return i
}

// skipValue returns the index after the option at i and its value at i+1:
// i+2, or i+1 when the value looks like an option, to check it as one too.
func skipValue(args []string, i int) int {
	if strings.HasPrefix(args[i+1], "-") && len(args[i+1]) > 1 && args[i+1] != "--" {
		return i + 1
	}
	return i + 2
}

// env checks a launch's environment.
func (c *checker) env(env map[string]string, inherit bool) {
	for _, k := range sortedKeys(env) {
		if r := envRule(c.launcher, k); r != nil {
			c.use(r, ruleUse{value: env[k], hasValue: true, p: c.p}, -1, k)
		}
	}
	if inherit {
		for _, r := range rulesOf(c.launcher, ruleField) {
			c.use(r, ruleUse{value: "true", hasValue: true, p: c.p}, -1, "inherit_env")
		}
	}
}

// Helpers for the rules' refuses functions.

// boolOn reports whether a boolean option is on: given without a value,
// or with one that is not a false boolean (an unreadable one counts as on).
func boolOn(u ruleUse) bool {
	if !u.hasValue {
		return true
	}
	b, err := strconv.ParseBool(u.value)
	return err != nil || b
}

// oneOf reports whether v is one of the values, in any case.
func oneOf(v string, values ...string) bool {
	return slices.ContainsFunc(values, func(w string) bool { return strings.EqualFold(v, w) })
}

// safeNodeOptionPattern is one Node.js option that loads nothing.
var safeNodeOptionPattern = lazyRegexp(`^--(max[-_]old[-_]space[-_]size=\d+|max[-_]semi[-_]space[-_]size=\d+|no[-_]warnings|no[-_]deprecation|trace[-_]warnings|trace[-_]deprecation|trace[-_]uncaught|enable[-_]source[-_]maps|use[-_]openssl[-_]ca|use[-_]bundled[-_]ca|dns[-_]result[-_]order=(ipv4first|ipv6first|verbatim)|unhandled[-_]rejections=(strict|warn|none|throw|warn-with-error-code))$`)

// safeNodeOptions reports whether a NODE_OPTIONS value holds only options
// that load nothing (heap size, warnings, source maps, ...). Quotes and
// backslashes, which Node.js reads specially, are refused.
func safeNodeOptions(v string) bool {
	if strings.ContainsAny(v, "\"'\\") {
		return false
	}
	for _, o := range strings.Fields(v) {
		if !safeNodeOptionPattern().MatchString(o) {
			return false
		}
	}
	return true
}

// npmSpecPattern is a registry package spec: [@scope/]name[@version,
// range or tag]. No / (GitHub's user/repo, paths), no : (git+, https:,
// file:, github:, npm: aliases), no # (git commits).
var npmSpecPattern = lazyRegexp(`^(@[A-Za-z0-9][A-Za-z0-9._~-]*/)?[A-Za-z0-9][A-Za-z0-9._~-]*(@[A-Za-z0-9._~^<>=|* +-]+)?$`)

// npmRegistrySpec reports whether npm reads spec as a package from the
// registry (npm-package-arg reads a spec ending in .tgz, .tar.gz or .tar
// as a local tarball).
func npmRegistrySpec(spec string) bool {
	if !npmSpecPattern().MatchString(spec) {
		return false
	}
	lower := strings.ToLower(spec)
	return !strings.HasSuffix(lower, ".tgz") && !strings.HasSuffix(lower, ".tar.gz") && !strings.HasSuffix(lower, ".tar")
}

// npmSpecName is the package name of a spec, without its version.
func npmSpecName(spec string) string {
	if i := strings.LastIndexByte(spec, '@'); i > 0 {
		return spec[:i]
	}
	return spec
}

// uvToolPattern is a tool as uvx reads it from the index:
// name[extras][@version|@latest]; uvFromPattern a package as --from
// takes it, also with version specifiers (name>=1,<2). Never a URL or a
// path.
var (
	uvToolPattern = lazyRegexp(`^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?(\[[A-Za-z0-9._, -]*\])?(@[A-Za-z0-9.!+_-]+)?$`)
	uvFromPattern = lazyRegexp(`^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?(\[[A-Za-z0-9._, -]*\])?(@[A-Za-z0-9.!+_-]+|\s*(===|==|>=|<=|~=|!=|<|>)\s*[A-Za-z0-9.!+_*-]+(\s*,\s*(===|==|>=|<=|~=|!=|<|>)\s*[A-Za-z0-9.!+_*-]+)*)?$`)
)

// uvToolSpec reports whether a tool (or, given by --from, a package) comes
// from the index.
func uvToolSpec(opt, spec string) bool {
	if opt == "--from" {
		return uvFromPattern().MatchString(spec)
	}
	return uvToolPattern().MatchString(spec)
}

// uvToolName is a tool spec without its extras and version.
func uvToolName(spec string) string {
	if i := strings.IndexAny(spec, "[@"); i >= 0 {
		return spec[:i]
	}
	return spec
}

// pyNameSeparators are the runs of separators a Python package name
// compares equal across (PEP 503).
var pyNameSeparators = lazyRegexp(`[-_.]+`)

// normalizePyName is a Python package name as the index compares it.
func normalizePyName(n string) string {
	return strings.ToLower(pyNameSeparators().ReplaceAllString(n, "-"))
}

// pythonToolPattern is a tool name uvx reads as a Python interpreter.
var pythonToolPattern = lazyRegexp(`(?i)^(python|pythonw|cpython|pypy|graalpy|pyodide)(\d[\d.]*t?)?(-\d.*)?$`)

func pythonTool(spec string) bool { return pythonToolPattern().MatchString(uvToolName(spec)) }

// pythonVersionPattern is a --python value that requests a version (and
// perhaps an implementation), never a path or a program's name.
var pythonVersionPattern = lazyRegexp(`(?i)^((cpython|pypy|graalpy|pyodide|python|cp|pp|gp)[@-]?)?((==|>=|<=|!=|~=|>|<)?\d+(\.\d+)*([a-z]+\d*)?(\s*,\s*(==|>=|<=|!=|~=|>|<)?\d+(\.\d+)*([a-z]+\d*)?)*)?$`)

func pythonVersionRequest(v string) bool {
	return strings.TrimSpace(v) != "" && pythonVersionPattern().MatchString(v)
}

// noNewPrivileges reports whether a --security-opt value only sets
// no-new-privileges (docker accepts key=value and key:value).
func noNewPrivileges(v string) bool {
	key, val, hasVal := strings.Cut(v, "=")
	if !hasVal {
		key, val, hasVal = strings.Cut(v, ":")
	}
	if !strings.EqualFold(key, "no-new-privileges") {
		return false
	}
	if !hasVal {
		return true
	}
	_, err := strconv.ParseBool(val)
	return err == nil
}

// dockerNetworkName is the network a --network value names: the value, or
// in the long form (name=NAME,alias=...) the name field, read as CSV as
// docker does. ok is false when docker could not read it.
func dockerNetworkName(v string) (string, bool) {
	if !strings.Contains(v, "=") {
		return v, true
	}
	fields, err := csv.NewReader(strings.NewReader(v)).Read()
	if err != nil {
		return "", false
	}
	name := ""
	for _, f := range fields {
		if k, val, _ := strings.Cut(f, "="); strings.EqualFold(strings.TrimSpace(k), "name") {
			name = val
		}
	}
	return name, true
}

// loopbackPublish reports whether a -p value publishes on a loopback
// address only: IP:HOST:CONTAINER with IP 127.x or ::1 ([::1]:HOST:...).
func loopbackPublish(v string) bool {
	var ip, rest string
	if strings.HasPrefix(v, "[") {
		end := strings.IndexByte(v, ']')
		if end < 0 {
			return false
		}
		ip, rest = v[1:end], v[end+1:]
		if !strings.HasPrefix(rest, ":") || strings.Count(rest, ":") != 2 {
			return false
		}
	} else {
		parts := strings.Split(v, ":")
		if len(parts) != 3 {
			return false
		}
		ip = parts[0]
	}
	addr := net.ParseIP(ip)
	return addr != nil && addr.IsLoopback()
}

// runtimeSocket reports whether a host path is, or holds, a container
// runtime's socket: a .sock file, or anything under /run or /var/run.
func runtimeSocket(p string) bool {
	if strings.HasSuffix(strings.ToLower(p), ".sock") || strings.HasSuffix(strings.ToLower(p), ".sock/") {
		return true
	}
	for _, dir := range []string{"/run", "/var/run"} {
		if p == dir || strings.HasPrefix(p, dir+"/") {
			return true
		}
	}
	return false
}

// dockerMountInfo is what a -v or --mount value mounts.
type dockerMountInfo struct {
	bind      bool   // a host path (or a Windows named pipe)
	raw       string // the host path as written
	host      string // the host path, absolute, symbolic links resolved
	readOnly  bool
	volumeOpt bool   // --mount with volume-opt
	detail    string // why it cannot be read, when it cannot
}

// volumeNamePattern is Docker's rule for a named volume.
var volumeNamePattern = lazyRegexp(`^[a-zA-Z0-9][a-zA-Z0-9_.-]+$`)

// dockerMount reads a -v/--volume or --mount value as docker does. ok is
// false when docker could not read it either.
func (p *LaunchPolicy) dockerMount(u ruleUse) (dockerMountInfo, bool) {
	var m dockerMountInfo
	switch u.opt {
	case "-v", "--volume":
		parts := strings.Split(u.value, ":")
		if len(parts) < 2 || len(parts) == 2 && volumeModes(parts[1]) {
			return m, true // an anonymous volume
		}
		src := parts[0]
		if len(parts) > 2 {
			m.readOnly = slices.Contains(strings.Split(parts[2], ","), "ro")
		}
		if src == "" || volumeNamePattern().MatchString(src) {
			return m, true // a named volume
		}
		m.bind, m.raw = true, src
	case "--mount":
		fields, err := csv.NewReader(strings.NewReader(u.value)).Read()
		if err != nil {
			m.detail = "docker reads --mount as CSV, and it is not: " + err.Error()
			return m, false
		}
		typ := "volume"
		for _, f := range fields {
			k, v, hasV := strings.Cut(f, "=")
			switch k {
			case "type":
				typ = strings.ToLower(v)
			case "source", "src":
				m.raw = v
			case "readonly", "ro":
				b, err := strconv.ParseBool(v)
				m.readOnly = !hasV || err == nil && b
			case "volume-opt":
				m.volumeOpt = true
			}
		}
		switch typ {
		case "bind":
			m.bind = true
		case "npipe":
			m.bind, m.host = true, "/run/npipe.sock" // a named pipe is the Docker socket on Windows
			return m, true
		case "volume", "tmpfs", "image", "cluster":
			return m, true
		default:
			m.detail = fmt.Sprintf("docker knows no mount type %q", typ)
			return m, false
		}
	default:
		return m, true
	}
	m.host = p.hostPath(m.raw)
	return m, true
}

// volumeModes reports whether s is a list of volume modes (-v /data:ro is
// an anonymous volume, not a bind of /data).
func volumeModes(s string) bool {
	for _, m := range strings.Split(s, ",") {
		switch m {
		case "ro", "rw", "z", "Z", "shared", "rshared", "slave", "rslave", "private", "rprivate", "nocopy", "consistent", "cached", "delegated":
		default:
			return false
		}
	}
	return true
}

// where says why a bind mount is refused: outside the configuration's
// folder, or writable inside it.
func (m dockerMountInfo) where(inside bool) string {
	if inside {
		return m.raw + " is mounted writable, so the container can plant commands your tools run (.git/hooks, .git/config)"
	}
	return m.host + " is outside the configuration's folder, so the container reads or changes your files"
}

// hostPath is a host path as docker will use it: absolute (relative to the
// launch's working directory), cleaned, with the symbolic links of the part
// that exists resolved.
func (p *LaunchPolicy) hostPath(raw string) string {
	path := raw
	if !filepath.IsAbs(path) {
		path = filepath.Join(p.workDir(), path)
	}
	return resolveExisting(filepath.Clean(path))
}

// resolveExisting resolves the symbolic links of the longest part of an
// absolute, clean path that exists.
func resolveExisting(path string) string {
	rest := ""
	for dir := path; ; dir = filepath.Dir(dir) {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(r, rest)
		}
		if dir == filepath.Dir(dir) {
			return path
		}
		rest = filepath.Join(filepath.Base(dir), rest)
	}
}

// inside reports whether a host path (from hostPath) is the policy's
// folder or inside it.
func (p *LaunchPolicy) inside(host string) bool {
	if p.Dir == "" || host == "" {
		return false
	}
	dir := p.hostPath(p.Dir)
	return host == dir || strings.HasPrefix(host, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}

// workDir is where relative host paths start.
func (p *LaunchPolicy) workDir() string {
	if p.WorkDir != "" {
		return p.WorkDir
	}
	wd, _ := os.Getwd()
	return wd
}
